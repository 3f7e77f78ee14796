"""schemathesis hooks of api-tests/run.sh (loaded by schemathesis.toml's `hooks`).

`POST /api/tournaments` needs a registration deadline after now and at most a year
ahead (`docs/TOURNAMENTS.md`, "Settings"): a window no generated integer falls in, so
without help every creation would be a `400` and the routes of an existing tournament
(register, close, referee, the live view) would only ever see unknown ids. A deadline
that is an integer (a well-typed one: wrong types are left to test the refusals) is
moved to an hour from now, and a start time that is an integer to the deadline or
after it; every other field stays as generated. The deadline rules themselves are
tested in `crates/tournament` and `crates/server/tests/tournaments.rs`.
"""

import time

import schemathesis

HOUR_MS = 3_600_000


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if case.operation.method.upper() != "POST" or case.operation.path != "/api/tournaments":
        return
    body = case.body
    if not isinstance(body, dict):
        return
    deadline = body.get("registration_deadline_ms")
    if type(deadline) is not int:
        return
    deadline = int(time.time() * 1000) + HOUR_MS
    body["registration_deadline_ms"] = deadline
    start = body.get("start_time_ms")
    if type(start) is int:
        body["start_time_ms"] = deadline + abs(start) % HOUR_MS
