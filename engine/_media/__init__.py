"""Images people share, as the model is shown them: the value and its content blocks (``image``),
and reading one from disk within the Messages API's limits (``fitting``)."""
