"""The synthetic kind: the paper's (Y, Z) model on a token distribution (the Lab's runs)."""
