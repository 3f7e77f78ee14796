"""schemathesis hooks of api-tests/run.sh (loaded by schemathesis.toml's `hooks`).

`POST /api/tournaments` needs a registration deadline after now and at most a year
ahead (`docs/TOURNAMENTS.md`, "Settings"): a window no generated integer falls in, so
without help every creation would be a `400` and the routes of an existing tournament
(register, close, referee, the live view) would only ever see unknown ids. A deadline
that is an integer (a well-typed one: wrong types are left to test the refusals) is
moved to an hour from now, and a start time that is an integer to the deadline or
after it; every other field stays as generated. The deadline rules themselves are
tested in `crates/tournament` and `crates/server/tests/tournaments.rs`.

The admin routes of one account (`/admin/accounts/{username}/…`: ban, rename, password,
ratings reset, delete) never name the two accounts whose tokens the fuzzer uses
(`fuzzer`, `tourney-player-31`): the fuzzer reads `fuzzer` in `GET /api/me` and would
otherwise ban it or reset its password early, ending its token, so that the rest of the
run's `/api/me…` requests only saw `401`. Such a request names the third account of
run.sh, `fuzz-target`, instead (an existing account, so the admin routes' `204`s are
reached too).
"""

import time

import schemathesis

HOUR_MS = 3_600_000


KEPT_ACCOUNTS = {"fuzzer", "tourney-player-31"}
TARGET_ACCOUNT = "fuzz-target"


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    if case.operation.path.startswith("/admin/accounts/{username}"):
        params = case.path_parameters
        name = params.get("username") if isinstance(params, dict) else None
        if isinstance(name, str) and name.lower() in KEPT_ACCOUNTS:
            params["username"] = TARGET_ACCOUNT
        return
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
