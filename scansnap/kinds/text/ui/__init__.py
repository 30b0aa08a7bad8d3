"""The Real text page's body: its URL state, actions, live area, charts and history reader."""
