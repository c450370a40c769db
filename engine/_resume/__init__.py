"""What a resumed session is shown: the shaping passes run at ``load()`` and the store wrapper that runs them.

``passes.PRUNING`` is the one ordered list; ``shaped.ShapedStore`` runs a list over any backend
of ``engine._stores``; ``stores`` holds the four exported store classes built from the two, and
``archive`` picks a workspace's backend (``sessions.db`` or PostgreSQL) and wraps it. The backends
never import this package: ``engine._resume`` sits above ``engine._stores``.
"""
