"""What a person sees, built without I/O: Block Kit messages and the texts catalogues (``texts``:
English and Chinese, one sentence per name)."""
