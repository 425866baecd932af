"""kge package."""
