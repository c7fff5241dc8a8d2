// Handler adapters of the Node.js runtime server: the peers' contracts over sless's request.
//
// server.js loads this file only when SLESS_INTERFACE names an interface other than `sless`.
// Each adapter turns one request of the gateway into what the peer's platform hands the
// tenant's code, and the code's answer into the response the peer would send (their
// documentation is the reference; see docs/migrating.md):
//
// - `lambda`: AWS Lambda behind API Gateway (HTTP API payload 2.0, or REST proxy 1.0), async
//   or callback handlers; a cron tick as EventBridge's Scheduled Event, a job or a queue
//   message as an async invoke's payload; the Lambda context object.
// - `openfaas`: the `node20` template: `module.exports = async (event, context)`, with
//   `context.status(...).headers(...).succeed(...)` / `fail(...)` and the optional callback.
// - `knative`: func's Node template: `handle(context, body)`.
//
// Security: an adapter runs in the handler's own process inside the function's sandbox,
// with nothing the handler does not have already. What the code answers goes through the
// server's one header check (`checkedHeaders`), and X-Sless-* request fields never reach it.
'use strict';

class Call {
  // target: the server's splitTarget(req.url), {rawPath, queryString}
  constructor(req, target, rawBody, invocationId, deadline) {
    this.rawPath = target.rawPath || '/';
    this.queryString = target.queryString;
    try {
      this.path = decodeURIComponent(this.rawPath);
    } catch (_) {
      this.path = this.rawPath;
    }
    this.queryPairs = [...new URLSearchParams(this.queryString)];
    this.method = req.method;
    this.headerPairs = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i].toLowerCase();
      if (!name.startsWith('x-sless-')) this.headerPairs.push([name, req.rawHeaders[i + 1]]);
    }
    this.body = rawBody;
    this.invocationId = invocationId;
    this.deadline = deadline;
    // a cron tick or a trigger's or job's call: headers only the platform can set
    this.tick = firstHeader(req, 'sless-tick');
    this.trigger = firstHeader(req, 'sless-trigger');
  }

  joinedHeaders() {
    const out = {};
    for (const [name, value] of this.headerPairs) out[name] = name in out ? `${out[name]}, ${value}` : value;
    return out;
  }

  textOrBase64() {
    if (!this.body.length) return [null, false];
    try {
      return [new TextDecoder('utf-8', { fatal: true }).decode(this.body), false];
    } catch (_) {
      return [this.body.toString('base64'), true];
    }
  }

  mediaType() {
    return String(this.joinedHeaders()['content-type'] || '').split(';')[0].trim().toLowerCase();
  }
}

function firstHeader(req, name) {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function checkStatus(value, server) {
  if (!Number.isInteger(value) || value < 100 || value > 599) {
    throw new server.HandlerResultError(`statusCode must be an integer 100-599, got ${JSON.stringify(value)}`);
  }
  return value;
}

function hasContentType(headers) {
  return Object.keys(headers).includes('content-type');
}

function jsonBuffer(value) {
  return Buffer.from(JSON.stringify(value === undefined ? null : value), 'utf8');
}

// --------------------------------------------------------------------------- lambda

function requestTime(now) {
  const d = new Date(now);
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getUTCDate())}/${months[d.getUTCMonth()]}/${d.getUTCFullYear()}:` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

function sourceIp(headers) {
  return String(headers['x-forwarded-for'] || '').split(',')[0].trim();
}

function lambdaEventV2(call, config) {
  const now = Date.now();
  const headers = call.joinedHeaders();
  const cookie = headers.cookie;
  delete headers.cookie;
  const [body, isBase64Encoded] = call.textOrBase64();
  const query = {};
  for (const [k, v] of call.queryPairs) query[k] = k in query ? `${query[k]},${v}` : v;
  const host = headers.host || '';
  const event = {
    version: '2.0',
    routeKey: '$default',
    rawPath: call.rawPath,
    rawQueryString: call.queryString,
    headers,
    requestContext: {
      accountId: 'anonymous',
      apiId: config.namespace,
      domainName: host,
      domainPrefix: host.split('.')[0],
      http: {
        method: call.method,
        path: call.path,
        protocol: 'HTTP/1.1',
        sourceIp: sourceIp(headers),
        userAgent: headers['user-agent'] || '',
      },
      requestId: call.invocationId,
      routeKey: '$default',
      stage: '$default',
      time: requestTime(now),
      timeEpoch: now,
    },
    isBase64Encoded,
  };
  if (cookie) event.cookies = cookie.split(';').map((c) => c.trim()).filter(Boolean);
  if (Object.keys(query).length) event.queryStringParameters = query;
  if (body !== null) event.body = body;
  return event;
}

function lambdaEventV1(call, config) {
  const now = Date.now();
  const headers = {};
  const multiValueHeaders = {};
  for (const [name, value] of call.headerPairs) {
    headers[name] = value;
    (multiValueHeaders[name] = multiValueHeaders[name] || []).push(value);
  }
  const query = {};
  const multiQuery = {};
  for (const [k, v] of call.queryPairs) {
    query[k] = v;
    (multiQuery[k] = multiQuery[k] || []).push(v);
  }
  const [body, isBase64Encoded] = call.textOrBase64();
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: '/{proxy+}',
    path: call.path,
    httpMethod: call.method,
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: call.path !== '/' ? { proxy: call.path.replace(/^\/+/, '') } : null,
    stageVariables: null,
    requestContext: {
      accountId: 'anonymous',
      apiId: config.namespace,
      httpMethod: call.method,
      identity: { sourceIp: sourceIp(headers), userAgent: headers['user-agent'] || '' },
      path: call.path,
      protocol: 'HTTP/1.1',
      requestId: call.invocationId,
      requestTime: requestTime(now),
      requestTimeEpoch: now,
      resourcePath: '/{proxy+}',
      stage: '$default',
    },
    body,
    isBase64Encoded,
  };
}

// A cron tick without a payload is EventBridge's Scheduled Event; a tick with one is that
// payload (EventBridge's "constant input"), as a job or a queue message is (an async invoke).
function lambdaTriggerEvent(call, config) {
  let payload = null;
  if (call.body.length) {
    try {
      payload = JSON.parse(call.body.toString('utf8'));
    } catch (_) {
      payload = call.body.toString('utf8');
    }
  }
  if (call.tick !== undefined && payload === null) {
    return {
      version: '0',
      id: call.invocationId,
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: 'anonymous',
      time: call.tick.endsWith('+00:00') ? call.tick.slice(0, 19) + 'Z' : call.tick,
      region: config.namespace,
      resources: [`arn:sless:events:${config.namespace}:rule/${call.trigger}`],
      detail: {},
    };
  }
  return payload;
}

function lambdaContext(config, call, done) {
  return {
    functionName: config.functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:sless:lambda:${config.namespace}:function:${config.functionName}`,
    memoryLimitInMB: process.env.SLESS_MEMORY_MB || '128',
    awsRequestId: call.invocationId,
    logGroupName: `/aws/lambda/${config.functionName}`,
    logStreamName: `${config.namespace}/${config.functionName}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, Math.floor(call.deadline * 1000 - Date.now())),
    done,
    succeed: (result) => done(null, result),
    fail: (err) => done(err || new Error('failed')),
  };
}

// async handlers resolve; callback handlers (three parameters) call back, or use the
// context's legacy done/succeed/fail
function runLambda(func, event, call, config) {
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (err, result) => {
      if (settled) return;
      settled = true;
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve(result);
    };
    let out;
    try {
      out = func(event, lambdaContext(config, call, done), done);
    } catch (err) {
      done(err);
      return;
    }
    if (out && typeof out.then === 'function') out.then((r) => done(null, r), (e) => done(e || new Error('rejected')));
    else if (func.length < 3) done(null, out);
  });
}

class LambdaAdapter {
  constructor(server, config, func) {
    this.server = server;
    this.config = config;
    this.func = func;
    this.v1 = process.env.SLESS_PAYLOAD_FORMAT_VERSION === '1.0';
  }

  async call(call) {
    if (call.trigger !== undefined) {
      const result = await runLambda(this.func, lambdaTriggerEvent(call, this.config), call, this.config);
      return [200, { 'content-type': 'application/json' }, jsonBuffer(result)];
    }
    const event = this.v1 ? lambdaEventV1(call, this.config) : lambdaEventV2(call, this.config);
    let result;
    try {
      result = await runLambda(this.func, event, call, this.config);
    } catch (err) {
      this.server.logError(call.invocationId, err);
      return this.v1 ? malformed() : [500, { 'content-type': 'application/json' }, Buffer.from('{"message":"Internal Server Error"}')];
    }
    try {
      return this.response(result);
    } catch (err) {
      if (!(err instanceof this.server.HandlerResultError)) throw err;
      this.server.logError(call.invocationId, err);
      return malformed();
    }
  }

  response(result) {
    const server = this.server;
    if (result === null || typeof result !== 'object' || !('statusCode' in result)) {
      if (this.v1) throw new server.HandlerResultError('a REST proxy answer needs statusCode');
      // HTTP API (2.0) infers a response from any other JSON value
      const body = typeof result === 'string' ? Buffer.from(result, 'utf8') : jsonBuffer(result);
      return [200, { 'content-type': 'application/json' }, body];
    }
    const status = checkStatus(result.statusCode, server);
    const pairs = [];
    const multi = result.multiValueHeaders || {};
    for (const [name, values] of Object.entries(multi)) {
      if (!Array.isArray(values)) throw new server.HandlerResultError('multiValueHeaders values must be arrays');
      for (const v of values) pairs.push([name, v]);
    }
    const taken = new Set(pairs.map(([n]) => String(n).toLowerCase()));
    for (const [name, value] of Object.entries(result.headers || {})) {
      if (!taken.has(name.toLowerCase())) pairs.push([name, value]);
    }
    const cookies = result.cookies || [];
    if (!Array.isArray(cookies)) throw new server.HandlerResultError('cookies must be an array');
    for (const c of cookies) pairs.push(['set-cookie', c]);
    let payload;
    if (result.body === undefined || result.body === null) payload = Buffer.alloc(0);
    else if (typeof result.body !== 'string') throw new server.HandlerResultError('body must be a string');
    else payload = Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8');
    const headers = server.checkedHeaders(pairs);
    if (!hasContentType(headers) && !this.v1) headers['content-type'] = 'application/json';
    return [status, headers, payload];
  }
}

function malformed() {
  return [502, { 'content-type': 'application/json' }, Buffer.from('{"message":"Internal server error"}')];
}

// --------------------------------------------------------------------------- openfaas

// the body as the template's Express parsers leave it: JSON parsed, text/* a string, a form
// an object, anything else a Buffer with RAW_BODY=true and `{}` without
function expressBody(call) {
  const media = call.mediaType();
  if (process.env.RAW_BODY === 'true') return call.body;
  if (!call.body.length) return {};
  const text = call.body.toString('utf8');
  if (media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json'))) {
    try {
      return JSON.parse(text);
    } catch (_) {
      return null;
    }
  }
  if (media.startsWith('text/')) return text;
  if (media === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text));
  return {};
}

function expressQuery(call) {
  const query = {};
  for (const [k, v] of call.queryPairs) {
    if (!(k in query)) query[k] = v;
    else query[k] = [].concat(query[k], v);
  }
  return query;
}

class OpenFaaSContext {
  constructor(done) {
    this.statusCode = 200;
    this.headerValues = {};
    this.cbCalled = 0;
    this.done = done;
  }
  status(code) {
    if (code === undefined) return this.statusCode;
    this.statusCode = code;
    return this;
  }
  headers(values) {
    if (values === undefined) return this.headerValues;
    this.headerValues = values;
    return this;
  }
  succeed(value) {
    this.cbCalled += 1;
    this.done(undefined, value);
  }
  fail(value) {
    this.cbCalled += 1;
    this.done(value, undefined);
  }
}

class OpenFaaSAdapter {
  constructor(server, config, func) {
    this.server = server;
    this.func = func;
  }

  async call(call) {
    const server = this.server;
    const event = {
      body: expressBody(call),
      headers: call.joinedHeaders(),
      method: call.method,
      query: expressQuery(call),
      path: call.path,
    };
    // [failure, value, context]; failure: 'thrown' (an exception) or 'failed' (fail(value)
    // or an error passed to the callback)
    const [failure, value, context] = await new Promise((resolve) => {
      let settled = false;
      const finish = (how, v) => {
        if (!settled) {
          settled = true;
          resolve([how, v, context]);
        }
      };
      const done = (e, v) => (e !== undefined && e !== null ? finish('failed', e) : finish(null, v));
      const context = new OpenFaaSContext(done);
      Promise.resolve()
        .then(() => this.func(event, context, done))
        .then((r) => { if (!context.cbCalled) done(undefined, r); }, (e) => finish('thrown', e));
    });
    if (failure !== null) {
      server.logError(call.invocationId, value);
      // the template answers 500 unless the function chose another status; an exception's
      // text stays in the log (sless never sends one), a value given to fail() is sent
      const status = context.statusCode === 200 ? 500 : checkStatus(context.statusCode, server);
      const text = failure === 'thrown' ? 'Internal Server Error'
        : (value && typeof value.toString === 'function' ? value.toString() : String(value));
      return [status, { 'content-type': 'text/html; charset=utf-8' }, Buffer.from(text, 'utf8')];
    }
    const headers = server.checkedHeaders(Object.entries(context.headers() || {}));
    const status = checkStatus(context.status(), server);
    let body;
    if (value === undefined || value === null) body = Buffer.alloc(0);
    else if (Buffer.isBuffer(value)) {
      body = value;
      if (!hasContentType(headers)) headers['content-type'] = 'application/octet-stream';
    } else if (typeof value === 'object') {
      body = Buffer.from(JSON.stringify(value), 'utf8');
      if (!hasContentType(headers)) headers['content-type'] = 'text/html; charset=utf-8';
    } else body = Buffer.from(String(value), 'utf8');
    if (!hasContentType(headers)) headers['content-type'] = 'text/html; charset=utf-8';
    return [status, headers, body];
  }
}

// --------------------------------------------------------------------------- knative

function knativeBody(call) {
  if (!call.body.length) return undefined;
  const media = call.mediaType();
  const text = call.body.toString('utf8');
  if (media === 'application/json' || media.endsWith('+json')) {
    try {
      return JSON.parse(text);
    } catch (_) {
      return text;
    }
  }
  if (media === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text));
  if (media.startsWith('text/') || media === '') return text;
  return call.body;
}

function knativeLog(invocationId) {
  const write = (level) => (...args) => process.stderr.write(`[${invocationId}] ${level}: ${args.map(String).join(' ')}\n`);
  return {
    trace: write('trace'), debug: write('debug'), info: write('info'),
    warn: write('warn'), error: write('error'), fatal: write('fatal'),
  };
}

class KnativeAdapter {
  constructor(server, config, func, mod) {
    this.server = server;
    this.func = func;
    this.module = mod || {};
  }

  async health(name) {
    const hook = this.module[name];
    if (typeof hook !== 'function') return [200, { 'content-type': 'text/plain; charset=utf-8' }, Buffer.from('OK')];
    const ok = await hook();
    return [ok === false ? 503 : 200, { 'content-type': 'text/plain; charset=utf-8' }, Buffer.from(ok === false ? 'NOT OK' : 'OK')];
  }

  async call(call) {
    const server = this.server;
    const probe = { '/health/liveness': 'liveness', '/health/readiness': 'readiness' }[call.path];
    if (probe) return this.health(probe);
    const body = knativeBody(call);
    const context = {
      method: call.method,
      query: expressQuery(call),
      headers: call.joinedHeaders(),
      body,
      httpVersion: '1.1',
      httpVersionMajor: 1,
      httpVersionMinor: 1,
      log: knativeLog(call.invocationId),
    };
    let result;
    try {
      result = await this.func(context, body);
    } catch (err) {
      // faas-js-runtime answers err.code or 500; the exception's text stays in the log
      server.logError(call.invocationId, err);
      const code = err && Number.isInteger(err.code) && err.code >= 400 && err.code <= 599 ? err.code : 500;
      return [code, { 'content-type': 'text/plain; charset=utf-8' }, Buffer.from('Internal Server Error')];
    }
    return knativeResponse(result, server);
  }
}

// func's Node.js runtime: JSON with CORS headers by default, nothing (or '') as 204, a string
// as text/plain, an object's `headers`/`statusCode`/`body` when it has them, else the object
function knativeResponse(result, server) {
  const headers = {
    'content-type': 'application/json; charset=utf8',
    'access-control-allow-methods': 'OPTIONS, GET, DELETE, POST, PUT, HEAD, PATCH',
    'access-control-allow-origin': '*',
  };
  if (!result) return [204, { ...headers, 'content-type': 'text/plain' }, Buffer.alloc(0)];
  if (typeof result === 'string') {
    return [200, { ...headers, 'content-type': 'text/plain; charset=utf8' }, Buffer.from(result, 'utf8')];
  }
  let status = 200;
  if (result.headers && typeof result.headers === 'object') {
    Object.assign(headers, server.checkedHeaders(Object.entries(result.headers)));
  }
  if (result.statusCode) status = checkStatus(result.statusCode, server);
  let value = result;
  if (result.body !== undefined) {
    value = result.body;
    if (typeof value === 'string') headers['content-type'] = 'text/plain; charset=utf8';
    else if (typeof value === 'object') headers['content-type'] = 'application/json; charset=utf8';
  }
  let payload;
  if (value === null) payload = Buffer.from('null');
  else if (Buffer.isBuffer(value)) payload = value;
  else if (typeof value === 'object') payload = jsonBuffer(value);
  else payload = Buffer.from(String(value), 'utf8');
  return [status, headers, payload];
}

const ADAPTERS = { lambda: LambdaAdapter, openfaas: OpenFaaSAdapter, knative: KnativeAdapter };

module.exports = { ADAPTERS, Call };
