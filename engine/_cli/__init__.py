"""The ``flower`` command, one module per concern; ``engine.cli`` is its entry point.

``command`` runs it (the wake prompt, Ctrl-C, the run until it ends), ``args`` is its options and
the language it speaks, ``cli_texts`` every text it prints (one table per language), ``view`` the
banners and one line per event, ``progress`` the live line while a step runs, on the ``screen``
(stderr with one status line kept under the printed ones), ``words`` where a person's words after
a Ctrl-C go, and ``cli_failure`` why a run ended without its goal and what to do next. It is a
second front end beside the Slack bot and, like it, imports only the engine's public faces
(``engine``, ``engine.events``, ``engine.lang``, ``engine.host``, ``engine.authoring``) besides its
own modules (tests/test_import_contract.py holds it); nothing here is public.
"""
