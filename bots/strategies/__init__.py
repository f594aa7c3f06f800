"""The built-in strategies and the search machinery they share."""
