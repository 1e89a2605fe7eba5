// What fetch does not say: whether the connection under a response was reset.
//
// Node's fetch (undici) reads a body delimited by the connection's close (no
// content-length, no chunked encoding) and, when that connection is reset (ECONNRESET),
// deliberately reports a clean end of body: the reset is swallowed. On the wire a reset
// is a transport failure (H3), not the end of the stream, so the adapter must see it.
// undici announces every request's socket on the `undici:client:sendHeaders` diagnostics
// channel; this module listens to those sockets' errors and files them under the attempt
// that is in flight (cases and their attempts run one at a time).

import diagnostics from 'node:diagnostics_channel';

const ATTEMPT = Symbol('attempt');
const WATCHED = Symbol('watched');

let inFlight = null;

diagnostics.subscribe('undici:client:sendHeaders', ({ socket }) => {
  if (!socket) return;
  socket[ATTEMPT] = inFlight; // a kept-alive socket serves one request after another
  if (!socket[WATCHED]) {
    socket[WATCHED] = true;
    socket.on('error', onSocketError);
  }
});

function onSocketError(error) {
  // Only what the operating system reported (ECONNRESET from a read, say). undici destroys
  // the socket itself with an informational UND_ERR_INFO "reset" after a close-delimited
  // body ended cleanly with a FIN; that is no failure.
  if (typeof error?.syscall !== 'string') return;
  const attempt = this[ATTEMPT];
  if (attempt && attempt.error === null) attempt.error = error;
}

/** Start watching the socket of the request about to be sent. */
export function watchNextRequest() {
  inFlight = { error: null };
  return inFlight;
}

export function stopWatching(record) {
  if (inFlight === record) inFlight = null;
}
