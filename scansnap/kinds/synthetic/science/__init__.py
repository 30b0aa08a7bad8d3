"""The synthetic kind's science: its config, the token distribution, the (Y, Z) model, the trainer,
the attention statistics and the theorems' curves (pure numpy/scipy/torch, no I/O)."""
