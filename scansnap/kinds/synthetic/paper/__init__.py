"""The synthetic kind's claims: Theorems 2–4 judged on one run, the theory drawn beside it, the story."""
