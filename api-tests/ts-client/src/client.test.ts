// The generated client used for real (issue 31): types generated from proto/openapi.json
// by openapi-typescript, requests by openapi-fetch, against the server at PARCHIS_URL
// (api-tests/run.sh starts one). A type error here (a path, parameter or field the
// document does not have) fails `npm run build` before anything runs.
import { test } from "node:test";
import assert from "node:assert/strict";
import createClient from "openapi-fetch";
import type { components, paths } from "../generated/schema.js";

const baseUrl = process.env.PARCHIS_URL ?? "http://127.0.0.1:8080";
const client = createClient<paths>({ baseUrl });

type RoomSettings = components["schemas"]["RoomSettings"];

async function createRoom(settings: RoomSettings): Promise<string> {
  const { data, error, response } = await client.POST("/api/rooms", { body: settings });
  assert.equal(response.status, 201, JSON.stringify(error));
  assert.ok(data);
  assert.match(data.code, /^[0-9A-HJKMNP-TV-Z]{10}$/);
  return data.code;
}

test("creates a room and reads it in the lobby", async () => {
  const code = await createRoom({ seats: 3, turn_clock_secs: 20, public: true });
  const lobby = await client.GET("/api/rooms", { params: { query: { status: "lobby" } } });
  assert.equal(lobby.response.status, 200);
  const listed = lobby.data?.rooms.find((r) => r.code === code);
  assert.ok(listed, `room ${code} is in the lobby`);
  assert.equal(listed.turn_clock_secs, 20);
  const room = await client.GET("/api/rooms/{code}", { params: { path: { code } } });
  assert.equal(room.data?.status, "lobby");
  assert.equal(room.data?.settings.seats, 3);
  const unknown = await client.GET("/api/rooms/{code}", { params: { path: { code: "0000000000" } } });
  assert.equal(unknown.response.status, 404);
  assert.equal(unknown.error?.code, "unknown_room");
});

/** One WebSocket command and its reply (the message echoing `req`). */
class Socket {
  private seq = 0;
  private waiting = new Map<number, (msg: Record<string, unknown>) => void>();
  private constructor(private ws: WebSocket) {
    ws.addEventListener("message", (e) => {
      const msg = JSON.parse(String(e.data)) as Record<string, unknown>;
      if (typeof msg.seq === "number") this.seq = Math.max(this.seq, msg.seq);
      const req = msg.req;
      if ((msg.type === "ok" || msg.type === "error" || msg.type === "welcome") && typeof req === "number") {
        this.waiting.get(req)?.(msg);
        this.waiting.delete(req);
      }
    });
  }
  static open(url: string): Promise<Socket> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.addEventListener("open", () => resolve(new Socket(ws)));
      ws.addEventListener("error", () => reject(new Error(`cannot open ${url}`)));
    });
  }
  send(req: number, command: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve) => {
      this.waiting.set(req, resolve);
      this.ws.send(JSON.stringify({ ...command, req, seq: this.seq }));
    });
  }
  close() {
    this.ws.close();
  }
}

test("reads a finished bot game", { timeout: 120_000 }, async () => {
  // Two seats, a random bot for the free one; the person leaves at once and a bot takes
  // the seat over, so the bots play the game out. Public, so that the fuzzer (run after
  // this test) finds the game in `GET /api/games` and follows its links.
  const code = await createRoom({
    seats: 2,
    bots: "random",
    on_abandon: "bot",
    bot_think_ms: 0,
    public: true,
  });
  const socket = await Socket.open(baseUrl.replace(/^http/, "ws") + "/ws");
  const welcome = await socket.send(1, { type: "join", room: code, name: "Ana" });
  assert.equal(welcome.type, "welcome", JSON.stringify(welcome));
  assert.equal((await socket.send(2, { type: "start", room: code })).type, "ok");
  assert.equal((await socket.send(3, { type: "leave", room: code })).type, "ok");
  socket.close();

  let id: string | undefined;
  for (let i = 0; i < 600 && !id; i++) {
    const page = await client.GET("/api/games", {
      params: { query: { room: code, result: "finished" } },
    });
    assert.equal(page.response.status, 200, JSON.stringify(page.error));
    id = page.data?.games[0]?.id;
    if (!id) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(id, "the bot game finished");

  const game = await client.GET("/api/games/{id}", { params: { path: { id } } });
  assert.ok(game.data, JSON.stringify(game.error));
  assert.equal(game.data.room, code);
  assert.equal(game.data.reason, "completed");
  assert.ok(game.data.result?.winner, "the game has a winner");
  // Ana's seat was taken over by a bot of the room's level when she left.
  assert.deepEqual(
    game.data.players.map((p) => [p.name, p.bot]),
    [
      ["Ana", "random"],
      ["Random bot 1", "random"],
    ],
  );
  const last = game.data.events.at(-1);
  assert.equal(last?.event.type, "dice_revealed");

  const replay = await client.GET("/api/games/{id}/replay", { params: { path: { id } } });
  assert.ok(replay.data, JSON.stringify(replay.error));
  assert.equal(replay.data.game.id, id);
  assert.ok(replay.data.steps.length > 10, "a whole game has many steps");

  const exported = await client.GET("/api/games/{id}/export", {
    params: { path: { id } },
    parseAs: "text",
  });
  assert.equal(exported.response.status, 200);
  assert.match(exported.data ?? "", new RegExp(`\\[Room "${code}"\\]`));
  assert.match(exported.data ?? "", /\[Termination "completed"\]/);
});
