"""The web app: koikoi serve."""
