"""The paper's figures and theorems re-run fresh, with verdicts: :mod:`.catalog` names them (no torch),
:mod:`.runner` runs them, one module per item holds its run and figures."""
