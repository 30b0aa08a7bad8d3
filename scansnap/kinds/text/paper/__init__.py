"""The real-text kind's claims: JoMA's drop and rebound read off a curve, Fig. 7 and JoMA on real data."""
