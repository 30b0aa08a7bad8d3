"""Scan & Snap lab: train the 1-layer transformer of Tian et al. (NeurIPS 2023) and watch its
attention scan and snap next to the theory.  Served by ``scansnap/server.py`` (``make run``).

Streamlit runs this file as ``__main__``.  The training workers are processes that multiprocessing
starts, and it makes each one import the parent's main module first, as ``__mp_main__``: keeping
everything under the guard below (multiprocessing's "safe importing of main module" rule) makes
that import a no-op, so a worker never runs the dashboard.
"""

if __name__ == "__main__":
    from scansnap.ui.shell import main

    main()
