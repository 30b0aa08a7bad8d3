"""The Lab\x27s live area: the fragment, the in-place chart component, render slots, the tick budget."""
