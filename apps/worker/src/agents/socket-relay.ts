/**
 * The Worker's end of an agent's WebSocket: frames pass through unchanged, and a close from either
 * side closes the other at once (issue 28.7; docs/2026-12-06-revocation-at-once.md).
 *
 * Why not return the agent's 101 as is (the runtime then couples the two sockets natively): when
 * the agent closes a hibernatable socket whose client has never sent a data frame (an open chat
 * before its first turn), the client gets the Close frame at once, but the connection itself is
 * only torn down when the agent's object is evicted, about 10 s later: measured under `pnpm dev`,
 * a socket closed by a revocation (a deleted app, a removed member, a sign-out) fired its client's
 * `close` after 10.0 to 10.2 s, against 50 to 90 ms once the client had sent any frame. Here the
 * Worker hears the agent's Close frame and closes the client's socket itself, which ends that
 * connection as soon as the client answers; the agent's side ends whenever its object lets it.
 *
 * The agent's object still hibernates (its side of the socket is unchanged); what the relay costs
 * is the Worker's invocation staying open with the socket and a copy per frame.
 */
export function relaySocket(response: Response): Response {
  const upstream = response.webSocket;
  if (response.status !== 101 || !upstream) return response;
  const pair = new WebSocketPair();
  const client = pair[0];
  const server = pair[1];
  // Frames as the protocol sends them: text, or binary as bytes (never a Blob to re-read).
  upstream.binaryType = "arraybuffer";
  server.binaryType = "arraybuffer";
  upstream.accept();
  server.accept();
  const pass = (to: WebSocket) => (event: MessageEvent) => {
    try {
      to.send(event.data as string | ArrayBuffer);
    } catch {
      // The other side is closing: its close event ends this one too.
    }
  };
  upstream.addEventListener("message", pass(server));
  server.addEventListener("message", pass(upstream));
  upstream.addEventListener("close", (event) => closeWith(server, event.code, event.reason));
  server.addEventListener("close", (event) => closeWith(upstream, event.code, event.reason));
  upstream.addEventListener("error", () => closeWith(server, 1011, "agent connection failed"));
  server.addEventListener("error", () => closeWith(upstream, 1011, "client connection failed"));
  return new Response(null, { status: 101, webSocket: client, headers: response.headers });
}

/**
 * Closes `socket` with the code and reason the other side closed with. Codes that only describe a
 * close and may not be sent (1005: none given; 1006 and 1015: the connection broke) become a
 * close with no code, or 1011.
 */
function closeWith(socket: WebSocket, code: number, reason: string): void {
  try {
    if (code === 1005) socket.close();
    else if (code < 1000 || code >= 5000 || [1004, 1006, 1015].includes(code)) {
      socket.close(1011, "connection ended");
    } else socket.close(code, reason);
  } catch {
    // Already closed.
  }
}
