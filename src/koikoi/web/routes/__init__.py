"""The web app's routes, one router to an area; :func:`koikoi.web.app.create_app` includes them in order.

- :mod:`.pages`: the HTML pages (the lobby, a table, an invitation, a replay, the rules);
- :mod:`.health`: ``/api/health`` and ``/api/ready``, for the operator and a load balancer;
- :mod:`.games`: games and seats over HTTP (create, list, join, a seat's table, its moves and hints);
- :mod:`.records`: finished games' records, replays and reviews, and record files uploaded to replay;
- :mod:`.cards`: the card faces;
- :mod:`.table`: the WebSocket a table plays over.

Each module's ``make_router(ctx)`` builds its router on the app's :class:`~koikoi.web.context.AppContext`;
what only one area uses (its rate limiters, its counters) is made there and stays there.
"""
