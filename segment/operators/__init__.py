"""raympp package."""
