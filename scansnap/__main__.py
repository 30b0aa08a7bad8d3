import sys

from scansnap.cli import main

sys.exit(main())
