"""The pages around a live session, one module per thing served. A feature with pages of its
own owns them (`Feature.get_urls()`, added to sessions/urls.py)."""
