"""The engine's one error base class; every error the engine raises on purpose derives from it.

Our exception hierarchy (every name is exported from ``engine``; where it is defined in brackets):

* FlowerError  [engine._errors] - also raised as itself: no Claude Code CLI found, the oracle
  could not answer, a TrimPolicy spill folder outside the workspace
  x StepAbort  [engine._flow.base] - a gate stops the workflow now; retrying cannot help
  x StoreError  [engine._stores.sqlite_db] - a SQLite file or a PostgreSQL database could not be read or written
  x CredentialsError (also RuntimeError)  [engine._run.credentials] - Claude Code cannot log in
  x WorkspaceBusyError (also RuntimeError)  [engine._run.run_lock] - another live run holds the workspace
  x ChannelError (also ValueError)  [engine._human.channel] - a HumanChannel used wrongly
  x TransportError  [engine._human.transports] - a Transport used wrongly
  x UnsafePath (also OSError)  [engine._beneath] - a workspace path the host will not follow (a symlink, a FIFO)
  x FileWorkOverran  [engine._file_work] - a run's file work (engine.host.file_work) overran its time
  x ImageRefused (also ValueError)  [engine._media.image] - an image that cannot be read, is none, or stays over the API's limits

The offline test kit adds ``engine.testing.FakeModelError(FlowerError)`` and
``engine.testing.PostgresServerError(FlowerError)``, exported from ``engine.testing`` only
(production code never imports the kit). A host derives its own errors
from ``FlowerError`` too, so ``except FlowerError`` catches everything said on purpose.
"""


class FlowerError(Exception):
    """Base class of the engine's own errors. Messages name what was wrong, the value, and the fix."""
