#!/usr/bin/env node
// sless runtime server for Node.js 20 (no dependencies).
//
// Implements the handler contract of ARCHITECTURE.md: `exports.handle = async (event, context)`
// (sync or async) in the tenant's code, over HTTP/1.1 with keep-alive on a Unix socket
// (SLESS_SOCKET, embedded mode) or on TCP 0.0.0.0:$PORT (container image).
//
// - The handler is loaded *before* the server listens: a socket that accepts connections
//   means the function is ready.
// - At most SLESS_CONCURRENCY handler calls run at once; extra requests wait in a FIFO queue.
// - A handler exception answers 500 with a fixed message and the invocation id; the stack
//   goes to stderr (the function's log), each line prefixed with the invocation id.
// - Every line a call writes to stdout/stderr (console.*, process.stdout.write) starts with
//   `[<invocation id>] ` (tagCallOutput): the call is an AsyncLocalStorage store, so
//   concurrent calls tag their own lines. A call's partial line waits for its newline, and
//   its lines go out in one write, so lines of concurrent calls never mix. Output outside a
//   call (at load) is written as it is.
// - `--check` loads the handler, checks the entrypoint is a function and prints one line.
//   The message is shown to the tenant, so paths are made relative to the code directory.
'use strict';

const fs = require('fs');
const http = require('http');
const path = require('path');
const Module = require('module');
const { AsyncLocalStorage } = require('async_hooks');

const MAX_BODY_BYTES = 32 * 1024 * 1024;
const ENTRYPOINT_RE = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*\.[A-Za-z_$][A-Za-z0-9_$]*$/;
const HEADER_TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'upgrade', 'te',
  'trailer', 'proxy-connection',
]);

function readConfig(env) {
  return {
    socket: env.SLESS_SOCKET || null,
    port: parseInt(env.PORT || '8080', 10),
    codeDir: env.SLESS_CODE_DIR || '/code',
    depsDir: env.SLESS_DEPS_DIR || null,
    entrypoint: env.SLESS_ENTRYPOINT || 'handler.handle',
    functionName: env.SLESS_FUNCTION || '',
    namespace: env.SLESS_NAMESPACE || '',
    timeoutS: parseFloat(env.SLESS_TIMEOUT_S || '30'),
    concurrency: Math.max(1, parseInt(env.SLESS_CONCURRENCY || '1', 10) || 1),
    // the handler contract (interfaces.js); 'sless' is ours
    interface: env.SLESS_INTERFACE || 'sless',
  };
}

class LoadError extends Error {}

function relative(text, config) {
  let out = String(text);
  const pairs = [[config.codeDir, ''], [config.depsDir, '<deps>/']];
  for (const [prefix, shown] of pairs) {
    if (prefix) out = out.split(prefix.replace(/\/+$/, '') + '/').join(shown);
  }
  return out.length <= 400 ? out : out.slice(0, 397) + '...';
}

function describe(err, config) {
  if (!(err instanceof Error)) return relative(`thrown value: ${String(err)}`, config);
  let message = `${err.name}: ${err.message.split('\n')[0]}`;
  if (err.name === 'SyntaxError' && typeof err.stack === 'string') {
    // V8 puts "file:line" as the first stack line for syntax errors
    const first = err.stack.split('\n')[0];
    if (first.startsWith(config.codeDir)) message = `SyntaxError in ${first}: ${err.message}`;
  } else if (typeof err.stack === 'string') {
    const frame = err.stack.split('\n').find((l) => l.includes(config.codeDir.replace(/\/+$/, '') + '/'));
    if (frame) {
      const m = frame.match(/\(?([^()\s]+):(\d+):\d+\)?$/);
      if (m) message += ` (${m[1]} line ${m[2]})`;
    }
  }
  return relative(message, config);
}

// the handler's module and the function the entrypoint names in it; an OpenFaaS handler
// is the module itself (`module.exports = async (event, context) => ...`)
async function loadModule(config) {
  if (!ENTRYPOINT_RE.test(config.entrypoint)) {
    throw new LoadError(`invalid entrypoint '${config.entrypoint}': expected 'module.function'`);
  }
  const dot = config.entrypoint.lastIndexOf('.');
  const moduleName = config.entrypoint.slice(0, dot);
  const funcName = config.entrypoint.slice(dot + 1);
  if (config.depsDir) {
    // NODE_PATH is read once at startup; re-read it so require() finds the built deps
    const extra = path.join(config.depsDir, 'node_modules');
    process.env.NODE_PATH = [extra, process.env.NODE_PATH].filter(Boolean).join(path.delimiter);
    Module._initPaths();
  }
  const base = path.join(config.codeDir, moduleName);
  const file = ['.js', '.cjs', '.mjs', '/index.js'].map((e) => base + e).find((f) => fs.existsSync(f));
  if (!file) throw new LoadError(`handler file '${moduleName}.js' not found in the code directory`);
  let mod;
  try {
    try {
      mod = require(file);
    } catch (err) {
      if (err && err.code === 'ERR_REQUIRE_ESM') mod = await import(require('url').pathToFileURL(file).href);
      else throw err;
    }
  } catch (err) {
    throw new LoadError(`cannot load '${moduleName}': ${describe(err, config)}`);
  }
  let func = mod ? mod[funcName] : undefined;
  if (func === undefined && mod && mod.default && typeof mod.default === 'object') func = mod.default[funcName];
  if (func === undefined && config.interface !== 'sless' && typeof mod === 'function') func = mod;
  if (func === undefined && config.interface !== 'sless' && mod && typeof mod.default === 'function') func = mod.default;
  if (func === undefined) throw new LoadError(`'${moduleName}' does not export '${funcName}'`);
  if (typeof func !== 'function') throw new LoadError(`'${config.entrypoint}' is not a function`);
  return { mod, func };
}

// the interface's adapter around the handler; null for the sless contract
function makeAdapter(config, loaded) {
  if (config.interface === 'sless') return null;
  const { ADAPTERS, Call } = require(path.join(__dirname, 'interfaces.js'));
  const Adapter = ADAPTERS[config.interface];
  if (!Adapter) throw new LoadError(`unknown interface '${config.interface}'`);
  const server = { HandlerResultError, checkedHeaders, logError };
  const adapter = new Adapter(server, config, loaded.func, loaded.mod);
  adapter.Call = Call;
  return adapter;
}

async function runCheck(config) {
  // whatever the tenant's module prints while loading goes to stderr: stdout is our one line
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr);
  let line;
  let code;
  try {
    makeAdapter(config, await loadModule(config));
    line = `ok: ${config.entrypoint} is callable`;
    code = 0;
  } catch (err) {
    line = `error: ${err instanceof LoadError ? err.message : describe(err, config)}`;
    code = 1;
  } finally {
    process.stdout.write = write;
  }
  fs.writeSync(1, line + '\n');
  return code;
}

function isJsonType(contentType) {
  const media = String(contentType || '').split(';')[0].trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'));
}

class BadRequest extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// the request target as path and query string (an absolute-form target is reduced to them)
function splitTarget(url) {
  let target = url || '/';
  if (!target.startsWith('/')) {
    try {
      const u = new URL(target);
      target = u.pathname + u.search;
    } catch (_) {
      target = '/' + target;
    }
  }
  const q = target.indexOf('?');
  return {
    rawPath: q === -1 ? target : target.slice(0, q),
    queryString: q === -1 ? '' : target.slice(q + 1),
  };
}

function buildEvent(req, rawBody) {
  const { rawPath, queryString } = splitTarget(req.url);
  let p;
  try {
    p = decodeURIComponent(rawPath);
  } catch (_) {
    p = rawPath;
  }
  if (!p.startsWith('/')) p = '/' + p;
  const query = {};
  const multiQuery = {};
  for (const [k, v] of new URLSearchParams(queryString)) {
    query[k] = v;
    (multiQuery[k] = multiQuery[k] || []).push(v);
  }
  const headers = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i].toLowerCase();
    if (name.startsWith('x-sless-')) continue;
    const value = req.rawHeaders[i + 1];
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let body = null;
  let isBase64Encoded = false;
  if (rawBody.length) {
    let text = null;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
    } catch (_) {
      body = rawBody.toString('base64');
      isBase64Encoded = true;
    }
    if (text !== null) {
      if (isJsonType(headers['content-type'])) {
        try {
          body = JSON.parse(text);
        } catch (_) {
          throw new BadRequest(400, 'invalid_json', 'request body is not valid JSON');
        }
      } else {
        body = text;
      }
    }
  }
  return { method: req.method, path: p, query, multiQuery, headers, body, isBase64Encoded };
}

class HandlerResultError extends Error {}

function jsonBytes(value) {
  let text;
  try {
    text = JSON.stringify(value === undefined ? null : value);
  } catch (err) {
    throw new HandlerResultError(`return value is not JSON serializable: ${err.message}`);
  }
  if (text === undefined) throw new HandlerResultError('return value is not JSON serializable');
  return Buffer.from(text, 'utf8');
}

// The one check of the headers a handler (or an adapter on its behalf) answers with: names
// lowercased, a name or value that would split the response refused, hop-by-hop and
// X-Sless-* fields dropped, and so are the fields a Connection field names (RFC 9110
// 7.6.1: the Connection is dropped here, so the gateway could not); a repeated name
// (set-cookie) becomes an array.
function checkedHeaders(pairs) {
  const headers = {};
  const named = new Set();
  for (const [k, v] of pairs) {
    if (String(k).toLowerCase() !== 'connection') continue;
    for (const part of String(v).split(',')) named.add(part.trim().toLowerCase());
  }
  for (const [k, v] of pairs) {
    const name = String(k).toLowerCase();
    const value = String(v);
    if (!HEADER_TOKEN_RE.test(name) || /[\r\n\0]/.test(value)) {
      // response splitting: refuse rather than send something we did not mean to
      throw new HandlerResultError(`invalid response header '${name}'`);
    }
    if (HOP_BY_HOP.has(name) || named.has(name) || name.startsWith('x-sless-')) continue;
    if (!(name in headers)) headers[name] = value;
    else headers[name] = [].concat(headers[name], value);
  }
  return headers;
}

function makeResponse(result) {
  if (result !== null && typeof result === 'object' && !Buffer.isBuffer(result) && 'statusCode' in result) {
    const status = result.statusCode;
    if (!Number.isInteger(status) || status < 100 || status > 599) {
      throw new HandlerResultError(`statusCode must be an integer 100-599, got ${JSON.stringify(status)}`);
    }
    const raw = result.headers || {};
    if (typeof raw !== 'object') throw new HandlerResultError('headers must be an object');
    const headers = checkedHeaders(Object.entries(raw));
    const body = result.body;
    let payload;
    if (isIterable(body)) {
      if (!headers['content-type']) headers['content-type'] = 'application/octet-stream';
      return [status, headers, body];
    }
    if (body === undefined || body === null) {
      payload = Buffer.alloc(0);
    } else if (Buffer.isBuffer(body) || body instanceof Uint8Array) {
      payload = Buffer.from(body);
      if (!headers['content-type']) headers['content-type'] = 'application/octet-stream';
    } else if (typeof body === 'string') {
      if (result.isBase64Encoded) {
        payload = Buffer.from(body, 'base64');
        if (!headers['content-type']) headers['content-type'] = 'application/octet-stream';
      } else {
        payload = Buffer.from(body, 'utf8');
        if (!headers['content-type']) headers['content-type'] = 'text/plain; charset=utf-8';
      }
    } else {
      payload = jsonBytes(body);
      if (!headers['content-type']) headers['content-type'] = 'application/json';
    }
    return [status, headers, payload];
  }
  if (Buffer.isBuffer(result)) return [200, { 'content-type': 'application/octet-stream' }, result];
  if (isIterable(result)) return [200, { 'content-type': 'application/octet-stream' }, result];
  return [200, { 'content-type': 'application/json' }, jsonBytes(result)];
}

function errorBody(code, message, invocationId) {
  const error = { code, message };
  if (invocationId) error.invocation_id = invocationId;
  return Buffer.from(JSON.stringify({ error }), 'utf8');
}

function logError(invocationId, err) {
  const text = err instanceof Error && err.stack ? err.stack : `thrown value: ${String(err)}`;
  const lines = text.split('\n').map((l) => `[${invocationId}] ${l}\n`);
  // tagged here already: written as it is, outside the call's store
  calls.exit(() => process.stderr.write(lines.join('')));
}

// the invocation id of the call running in this async context (undefined: outside any call)
const calls = new AsyncLocalStorage();
// a partial line longer than this is written out without waiting for its newline
const MAX_PARTIAL_LINE = 64 * 1024;
// per stream: invocation id -> the call's text after its last newline
const partials = new Map();

// From now on, what a call writes to stdout/stderr carries its invocation id.
function tagCallOutput() {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream);
    const partial = new Map();
    partials.set(stream, { write, partial });
    stream.write = (chunk, encoding, callback) => {
      const call = calls.getStore();
      if (call === undefined) return write(chunk, encoding, callback);
      const done = typeof encoding === 'function' ? encoding : callback;
      const text = typeof chunk === 'string' && (typeof encoding !== 'string' || encoding === 'utf8')
        ? chunk : Buffer.from(chunk, typeof encoding === 'string' ? encoding : undefined).toString('utf8');
      const pending = (partial.get(call) || '') + text;
      partial.delete(call);
      let end = pending.lastIndexOf('\n');
      if (end < 0 && pending.length <= MAX_PARTIAL_LINE) {
        partial.set(call, pending);
        if (done) process.nextTick(done);
        return true;
      }
      if (end < 0) end = pending.length;
      else if (end + 1 < pending.length) partial.set(call, pending.slice(end + 1));
      const prefix = `[${call}] `;
      return write(prefix + pending.slice(0, end).split('\n').join('\n' + prefix) + '\n', done);
    };
  }
}

// The call is over: its unfinished lines are written, ended.
function endCallOutput(call) {
  for (const { write, partial } of partials.values()) {
    const rest = partial.get(call);
    partial.delete(call);
    if (rest) write(`[${call}] ${rest}\n`);
  }
}

class Slots {
  constructor(size) {
    this.free = size;
    this.waiting = [];
  }
  acquire() {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  release() {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}

function isIterable(value) {
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || value instanceof Uint8Array) return false;
  if (Array.isArray(value)) return false;
  return typeof value[Symbol.asyncIterator] === 'function'
    || (typeof value[Symbol.iterator] === 'function' && typeof value.next === 'function');
}

function chunkBytes(value) {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  return Buffer.concat([jsonBytes(value), Buffer.from('\n')]);
}

// A streamed answer (HTTP/1.1 chunked): from an async iterator the handler returns (or
// the body of its response object), or from context.write(). Each chunk waits for the
// socket to drain before the next is taken, so the gateway's back-pressure reaches the
// handler. The gateway closing the connection stops the handler: the iterator is
// returned (its finally runs), context.signal aborts, and context.write rejects.
class StreamWriter {
  constructor(res, headOnly, invocationId) {
    this.res = res;
    this.headOnly = headOnly;
    this.invocationId = invocationId;
    this.started = false;
    this.gone = false;
    this.aborter = new AbortController();
    res.on('close', () => {
      if (res.writableFinished) return;
      this.gone = true;
      this.aborter.abort();
    });
  }

  start(status, headers) {
    this.started = true;
    delete headers['content-length'];
    this.res.writeHead(status, headers);
    this.res.flushHeaders();
  }

  async writeChunk(value) {
    if (this.gone) throw new Error('the caller went away');
    if (this.res.writableEnded) throw new Error('the response has ended: write before the handler returns');
    const chunk = chunkBytes(value);
    if (!chunk.length || this.headOnly) return; // an empty chunk would end the body
    if (!this.res.write(chunk)) {
      await new Promise((resolve) => {
        const done = () => {
          this.res.off('drain', done);
          this.res.off('close', done);
          resolve();
        };
        this.res.on('drain', done);
        this.res.on('close', done);
      });
    }
    if (this.gone) throw new Error('the caller went away');
  }

  async write(value, context, base) {
    if (!this.started) {
      const status = context.status;
      if (!Number.isInteger(status) || status < 100 || status > 599) {
        throw new HandlerResultError(`context.status must be an integer 100-599, got ${JSON.stringify(status)}`);
      }
      const headers = checkedHeaders(Object.entries(context.headers || {}));
      if (!headers['content-type']) headers['content-type'] = 'application/octet-stream';
      this.start(status, { ...headers, ...base });
    }
    await this.writeChunk(value);
  }

  async pipe(iterable, invocationId) {
    const iterator = typeof iterable[Symbol.asyncIterator] === 'function'
      ? iterable[Symbol.asyncIterator]() : iterable[Symbol.iterator]();
    let finished = false;
    try {
      while (!this.gone) {
        const step = await iterator.next();
        if (step.done) {
          finished = true;
          break;
        }
        await this.writeChunk(step.value);
      }
    } catch (err) {
      if (!this.gone) logError(invocationId, err);
      this.cut();
      return;
    } finally {
      if (!finished && typeof iterator.return === 'function') {
        try {
          await iterator.return();
        } catch (err) {
          logError(invocationId, err);
        }
      }
    }
    if (this.gone) return;
    await this.end();
  }

  end() {
    return new Promise((resolve) => this.res.end(resolve));
  }

  // a failure after the head: the caller sees the stream cut short (no last chunk)
  cut() {
    // what was written goes out first; then the connection closes without the last chunk
    const socket = this.res.socket;
    if (socket && !socket.destroyed) socket.end();
    else this.res.destroy();
  }
}

// --------------------------------------------------------------------------- websockets
// The gateway speaks RFC 6455 with the caller and relays whole messages to the worker
// after an HTTP/1.1 upgrade to `sless-websocket`: one frame per message, a kind byte
// (1 text, 2 binary, 8 close), a 4-byte big-endian length, the payload (docs/websockets.md).
const WS_PROTOCOL = 'sless-websocket';
const WS_TEXT = 1;
const WS_BINARY = 2;
const WS_CLOSE = 8;
const WS_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
// messages waiting for receive() past this many stop the reads from the gateway
const WS_HIGH_WATER = 16;

class WebSocketClosed extends Error {}

// `context.websocket`: the caller's session as whole messages
class WebSocketSession {
  constructor(socket, head) {
    this.socket = socket;
    this.buffer = head && head.length ? Buffer.from(head) : Buffer.alloc(0);
    this.closed = false;
    this.closeCode = null;
    this.messages = [];
    this.waiters = [];
    this.aborter = new AbortController();
    socket.on('data', (data) => {
      this.buffer = Buffer.concat([this.buffer, data]);
      this.parse();
    });
    socket.on('close', () => this.finish(1006));
    socket.on('error', () => this.finish(1006));
    this.parse();
  }

  parse() {
    while (!this.closed && this.buffer.length >= 5) {
      const kind = this.buffer[0];
      const length = this.buffer.readUInt32BE(1);
      if (length > WS_MAX_MESSAGE_BYTES || ![WS_TEXT, WS_BINARY, WS_CLOSE].includes(kind)) {
        this.socket.destroy();
        this.finish(1002);
        return;
      }
      if (this.buffer.length < 5 + length) return;
      const payload = this.buffer.subarray(5, 5 + length);
      this.buffer = this.buffer.subarray(5 + length);
      if (kind === WS_CLOSE) {
        this.finish(payload.length >= 2 ? payload.readUInt16BE(0) : 1005);
        return;
      }
      const message = kind === WS_TEXT ? payload.toString('utf8') : Buffer.from(payload);
      const waiter = this.waiters.shift();
      if (waiter) waiter(message);
      else {
        this.messages.push(message);
        if (this.messages.length >= WS_HIGH_WATER) this.socket.pause();
      }
    }
  }

  finish(code) {
    if (this.closed) return;
    this.closed = true;
    this.closeCode = code;
    for (const waiter of this.waiters.splice(0)) waiter(null);
    this.aborter.abort();
  }

  // the next message (a string for text, a Buffer for binary); null once closed
  receive() {
    if (this.messages.length) {
      const message = this.messages.shift();
      if (this.messages.length < WS_HIGH_WATER) this.socket.resume();
      return Promise.resolve(message);
    }
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  // a string goes as text, a Buffer (or Uint8Array) as binary; resolves once written
  send(message) {
    if (this.closed) return Promise.reject(new WebSocketClosed('the WebSocket session is closed'));
    let kind;
    let payload;
    if (typeof message === 'string') {
      kind = WS_TEXT;
      payload = Buffer.from(message, 'utf8');
    } else if (message instanceof Uint8Array) {
      kind = WS_BINARY;
      payload = Buffer.from(message);
    } else {
      return Promise.reject(new TypeError('send() takes a string or a Buffer'));
    }
    return this.frame(kind, payload);
  }

  close(code = 1000, reason = '') {
    if (this.closed) return Promise.resolve();
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code, 0);
    const done = this.frame(WS_CLOSE, Buffer.concat([payload, Buffer.from(reason, 'utf8').subarray(0, 120)]));
    this.finish(code);
    this.socket.end();
    return done.catch(() => {});
  }

  frame(kind, payload) {
    const head = Buffer.alloc(5);
    head[0] = kind;
    head.writeUInt32BE(payload.length, 1);
    return new Promise((resolve, reject) => {
      this.socket.write(Buffer.concat([head, payload]), (err) => {
        if (err) reject(new WebSocketClosed('the WebSocket session is closed'));
        else resolve();
      });
    });
  }
}

function send(res, status, headers, body) {
  headers['content-length'] = String(body.length);
  res.writeHead(status, headers);
  res.end(body);
}

function serve(config, func, adapter) {
  const slots = new Slots(config.concurrency);

  async function invokeAdapter(req, rawBody, res, invocationId, deadline) {
    const base = { 'x-sless-invocation-id': invocationId };
    await slots.acquire();
    let response;
    try {
      response = await adapter.call(new adapter.Call(req, splitTarget(req.url), rawBody, invocationId, deadline));
    } catch (err) {
      logError(invocationId, err);
      response = [500, { 'content-type': 'application/json' },
        errorBody('handler_error', 'the function raised an error', invocationId)];
    } finally {
      slots.release();
    }
    const [status, headers, body] = response;
    send(res, status, { ...headers, ...base }, req.method === 'HEAD' ? Buffer.alloc(0) : body);
  }

  async function invoke(req, rawBody, res) {
    const header = (n) => {
      const v = req.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    const invocationId = header('x-sless-invocation-id') || require('crypto').randomUUID().replace(/-/g, '');
    try {
      await calls.run(invocationId, () => invokeAs(req, rawBody, res, invocationId, header));
    } finally {
      endCallOutput(invocationId);
    }
  }

  async function invokeAs(req, rawBody, res, invocationId, header) {
    let deadline = parseFloat(header('x-sless-deadline'));
    if (!Number.isFinite(deadline)) deadline = Date.now() / 1000 + config.timeoutS;
    if (adapter) {
      await invokeAdapter(req, rawBody, res, invocationId, deadline);
      return;
    }
    const base = { 'x-sless-invocation-id': invocationId };
    let event;
    try {
      event = buildEvent(req, rawBody);
    } catch (err) {
      if (!(err instanceof BadRequest)) throw err;
      send(res, err.status, { ...base, 'content-type': 'application/json' }, errorBody(err.code, err.message, invocationId));
      return;
    }
    const stream = new StreamWriter(res, req.method === 'HEAD', invocationId);
    const context = {
      function: config.functionName,
      namespace: config.namespace,
      invocation_id: invocationId,
      deadline,
      // the W3C trace context of this call: send it on as `traceparent` to continue the trace
      traceparent: header('traceparent') || '',
      trace_id: (header('traceparent') || '').length === 55 ? header('traceparent').slice(3, 35) : '',
      remaining_time: () => Math.max(0, deadline - Date.now() / 1000),
      // a stream written from the handler: set status and headers before the first write
      status: 200,
      headers: {},
      write: (chunk) => stream.write(chunk, context, base),
      // the caller's WebSocket session, for a call that is one (docs/websockets.md)
      websocket: null,
      // aborted when the caller (the gateway) goes away
      signal: stream.aborter.signal,
    };
    await slots.acquire();
    try {
      let response;
      try {
        const result = await func(event, context);
        if (stream.started) {
          await stream.end();
          return;
        }
        response = makeResponse(result);
      } catch (err) {
        if (stream.started) {
          if (!stream.gone) logError(invocationId, err);
          stream.cut();
          return;
        }
        logError(invocationId, err);
        response = [500, { 'content-type': 'application/json' },
          errorBody('handler_error', 'the function raised an error', invocationId)];
      }
      const [status, headers, body] = response;
      if (isIterable(body)) {
        stream.start(status, { ...headers, ...base });
        await stream.pipe(body, invocationId);
        return;
      }
      send(res, status, { ...headers, ...base }, req.method === 'HEAD' ? Buffer.alloc(0) : body);
    } finally {
      slots.release();
    }
  }

  // one WebSocket session: the handler runs with `context.websocket` until it returns
  async function session(req, socket, head) {
    const header = (n) => {
      const v = req.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    if (adapter || (header('upgrade') || '').toLowerCase() !== WS_PROTOCOL) {
      const body = errorBody('not_implemented', 'WebSockets need the sless interface');
      socket.end(`HTTP/1.1 501 Not Implemented\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    const invocationId = header('x-sless-invocation-id') || require('crypto').randomUUID().replace(/-/g, '');
    const deadline = Date.now() / 1000 + config.timeoutS;
    let event;
    try {
      event = buildEvent(req, Buffer.alloc(0));
    } catch (err) {
      socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nupgrade: ${WS_PROTOCOL}\r\nconnection: upgrade\r\n\r\n`);
    const ws = new WebSocketSession(socket, head);
    const context = {
      function: config.functionName,
      namespace: config.namespace,
      invocation_id: invocationId,
      deadline,
      traceparent: header('traceparent') || '',
      trace_id: (header('traceparent') || '').length === 55 ? header('traceparent').slice(3, 35) : '',
      remaining_time: () => Math.max(0, deadline - Date.now() / 1000),
      websocket: ws,
      // aborted when the session ends
      signal: ws.aborter.signal,
    };
    await slots.acquire();
    try {
      await func(event, context);
      await ws.close(1000);
    } catch (err) {
      if (!ws.closed) {
        logError(invocationId, err);
        await ws.close(1011, 'the function raised an error');
      }
    } finally {
      slots.release();
      socket.destroy();
    }
  }

  const server = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) {
        res.setHeader('connection', 'close');
        send(res, 413, { 'content-type': 'application/json' }, errorBody('payload_too_large', 'request body too large'));
        return;
      }
      invoke(req, Buffer.concat(chunks), res).catch((err) => {
        logError('runtime', err);
        if (!res.headersSent) send(res, 500, { 'content-type': 'application/json' }, errorBody('runtime_error', 'runtime failure'));
      });
    });
  });
  server.on('upgrade', (req, socket, head) => {
    session(req, socket, head).catch((err) => {
      logError('runtime', err);
      socket.destroy();
    });
  });
  // longer than the gateway's client keep-alive, so the client always closes first
  server.keepAliveTimeout = 75000;
  server.headersTimeout = 80000;
  server.requestTimeout = 0; // the gateway enforces the function's timeout
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  startEgressForwarder(process.env.SLESS_EGRESS_SOCKET);
  if (config.socket) {
    try {
      fs.unlinkSync(config.socket);
    } catch (_) {
      // not there: fine
    }
    server.listen({ path: config.socket, backlog: 128 });
  } else {
    server.listen({ port: config.port, host: '0.0.0.0', backlog: 128 });
  }
}

// Forward 127.0.0.1:3128 (HTTP_PROXY) to the gateway's egress proxy socket: the sandbox has
// no network, and the proxy behind this port allows only the function's egress allowlist.
function startEgressForwarder(socketPath) {
  if (!socketPath) return;
  const net = require('net');
  const forwarder = net.createServer((client) => {
    const upstream = net.connect({ path: socketPath });
    client.pipe(upstream);
    upstream.pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
  });
  forwarder.listen({ port: 3128, host: '127.0.0.1' });
}

async function main() {
  const config = readConfig(process.env);
  if (process.argv.slice(2).includes('--check')) {
    process.exitCode = await runCheck(config);
    return;
  }
  // before the handler loads: what it keeps of process.stdout.write is the tagging one
  tagCallOutput();
  let func;
  let adapter;
  try {
    const loaded = await loadModule(config);
    func = loaded.func;
    adapter = makeAdapter(config, loaded);
  } catch (err) {
    const message = err instanceof LoadError ? err.message : describe(err, config);
    process.stderr.write(`sless: cannot start: ${message}\n`);
    process.exit(1);
  }
  serve(config, func, adapter);
}

main();
