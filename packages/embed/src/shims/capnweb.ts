/**
 * The embed's stand-in for capnweb. agents/react imports it for its optional Cap'n Web RPC
 * transport, which the chat never uses (it speaks the agents chat protocol over a plain socket);
 * the real library is about 20 KB gzip of the embed's 60 KB. Choosing that transport fails loudly.
 */
export class RpcTarget {}

export function newWebSocketRpcSession(): never {
  throw new Error("The capnweb transport is not part of the Parley embed.");
}
