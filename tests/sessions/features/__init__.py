"""A test module per feature (playground/sessions/features/): the feature alone, with a fake
SessionContext, tab and client (tests/sessions/fakes.py), then through tab ↔ consumer ↔ worker
against real servers (the SDK peer, server-everything) where a test says so."""
