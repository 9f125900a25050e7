"""Model view, a feature with pages of its own: feature.py (the feature), panel.py (what its
panel shows), views.py (its pages)."""
