"""How a restored file and the wording read (render.py, the core's file renderer, [templates])."""
