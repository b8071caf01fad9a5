"""`make soak`: 8 agent processes (Python and Go clients) on one daemon killed -9 and restarted."""
