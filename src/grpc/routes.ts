// Mounts the Connect handlers (gRPC-Web, gRPC, Connect) under /grpc; they read the raw body themselves.
import { Router } from 'express';
import { grpcMiddleware, type ExecutionDeps } from './execution.js';

export function grpcRouter(deps: ExecutionDeps): Router {
  const router = Router();
  router.use(grpcMiddleware(deps));
  return router;
}
