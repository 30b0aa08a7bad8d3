"""The text kind: a small causal Transformer on real text (Scan & Snap Fig. 7, JoMA's real-data figure)."""
