// Mounts the Connect handlers (gRPC-Web, gRPC, Connect) under /grpc; they read the raw body themselves.
import { Router, type RequestHandler } from 'express';
import onHeaders from 'on-headers';
import { GRPC_PREFIX, grpcMiddleware, type ExecutionDeps } from './execution.js';

/**
 * Time for the client to read the answer before a connection with an unread body is cut. Closing a
 * socket with unread bytes sends a reset, which can drop the answer from the client's buffers if
 * the client has not read it yet: 1 s was seen too short on a loaded machine.
 */
const UNREAD_BODY_GRACE_MS = 5000;

/**
 * Connect answers a message it refuses by its header (over SVC_BODY_LIMIT_BYTES) without reading the
 * rest of the request. Kept alive, the connection would read that rest as the next request and hang,
 * or hold a client that is still uploading; such an answer ends the connection (the client
 * reconnects for its next call), and cuts it after a grace period. Its head says `Connection:
 * close`: a client that took the connection for its next call before the close reached it would
 * lose that call.
 */
const endConnectionAfterUnreadBody: RequestHandler = (req, res, next) => {
  // Taken now: by 'finish' the response has let go of its socket.
  const { socket } = req;
  onHeaders(res, () => {
    if (!req.complete) res.setHeader('Connection', 'close');
  });
  res.once('finish', () => {
    if (req.complete) return;
    socket.end();
    setTimeout(() => socket.destroy(), UNREAD_BODY_GRACE_MS).unref();
  });
  next();
};

export function grpcRouter(deps: ExecutionDeps): Router {
  const router = Router();
  router.use(GRPC_PREFIX, endConnectionAfterUnreadBody);
  router.use(grpcMiddleware(deps));
  return router;
}
