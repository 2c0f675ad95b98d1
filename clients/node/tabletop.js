// A small Tabletop client for Node.js, written from the protos and docs alone:
// @grpc/grpc-js for the calls, @grpc/proto-loader for the service definitions,
// protobufjs to decode the google.rpc.ErrorInfo of a rejection.
"use strict";

const path = require("node:path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");
const protobuf = require("protobufjs");

const PROTOS = path.resolve(__dirname, "..", "..", "protos");

// proto3 `optional` fields (your_seat, seat, expected_version, after_version)
// keep their presence: an unset one is absent (undefined, even with
// `defaults: true`) and a set one carries its value, 0 included.
const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTOS],
};

const definition = protoLoader.loadSync("tabletop/match/v1/match.proto", LOADER_OPTIONS);
const match = grpc.loadPackageDefinition(definition).tabletop.match.v1;

// The rich error details: google.rpc.Status in the `grpc-status-details-bin`
// trailer, its details an Any holding a google.rpc.ErrorInfo.
const rpcRoot = new protobuf.Root();
rpcRoot.resolvePath = (_origin, target) => path.join(PROTOS, target);
rpcRoot.loadSync(["google/rpc/status.proto", "google/rpc/error_details.proto"]);
const Status = rpcRoot.lookupType("google.rpc.Status");
const ErrorInfo = rpcRoot.lookupType("google.rpc.ErrorInfo");

/** The ErrorInfo of a failed call ({reason, domain, metadata}), or null. */
function errorInfo(error) {
  const values = error && error.metadata ? error.metadata.get("grpc-status-details-bin") : [];
  if (!values || values.length === 0) return null;
  const status = Status.decode(values[0]);
  for (const detail of status.details) {
    if (detail.type_url === "type.googleapis.com/google.rpc.ErrorInfo") {
      const info = ErrorInfo.decode(detail.value);
      return { reason: info.reason, domain: info.domain, metadata: { ...info.metadata } };
    }
  }
  return null;
}

function promisify(client, method) {
  return (request, metadata) =>
    new Promise((resolve, reject) => {
      client[method](request, metadata || new grpc.Metadata(), (error, reply) =>
        error ? reject(error) : resolve(reply),
      );
    });
}

/** One connection to the match service, calls as promises. */
class MatchClient {
  constructor(address) {
    const credentials = grpc.credentials.createInsecure();
    this.auth = new match.AuthService(address, credentials);
    this.match = new match.MatchService(address, credentials);
    this.guestLogin = promisify(this.auth, "GuestLogin");
    this.refreshToken = promisify(this.auth, "RefreshToken");
    for (const m of ["CreateMatch", "SubmitMove", "GetMatch", "ListMatches"]) {
      this[m[0].toLowerCase() + m.slice(1)] = promisify(this.match, m);
    }
  }

  /** Call metadata carrying a bearer token. */
  static bearer(token) {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    return metadata;
  }

  /** A WatchMatch stream (a grpc-js ClientReadableStream of MatchCommit). */
  watchMatch(request, metadata) {
    return this.match.WatchMatch(request, metadata);
  }

  /**
   * A PlayMatch stream (a grpc-js ClientDuplexStream): write
   * `{open: {match_id, include_view}}` first, then `{move: {ref, move_json, ...}}`;
   * read PlayFrames (`kind`: "commit", "answer" or "error", `ref` naming the move).
   */
  playMatch(metadata) {
    return this.match.PlayMatch(metadata);
  }

  /**
   * A PlaySession stream (a grpc-js ClientDuplexStream) for the whole session:
   * write `{create: {ref, match}}`, `{open: {sub, open: {match_id, ...}}}`,
   * `{move: {sub, move: {ref, move_json, ...}}}` or `{close: {sub}}` in any
   * order; read SessionFrames (`sub`, `ref`, `kind`: "commit", "answer",
   * "error", "closed" or "created").
   */
  playSession(metadata) {
    return this.match.PlaySession(metadata);
  }

  close() {
    this.auth.close();
    this.match.close();
  }
}

module.exports = { MatchClient, errorInfo, grpc };
