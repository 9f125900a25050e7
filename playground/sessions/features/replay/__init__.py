"""Replay, a feature with a page of its own: feature.py (the feature), region.py (the Differences
region), views.py (the ignore rules' page)."""
