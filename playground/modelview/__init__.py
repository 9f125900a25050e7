"""What a model receives: a server's tools as the OpenAI, Anthropic and Gemini APIs take them,
each provider's documented limits as rules, and a token estimate. No Django: the session
page's Model view, its download and the golden-file tests all use `view.model_view`."""
