// The one client of the HTTP API. The token lives in sessionStorage (this tab only,
// gone when it closes) and travels in the Authorization header, never in a URL.

const KEY = "sless.token";

export const session = {
  get token() {
    return sessionStorage.getItem(KEY);
  },
  signIn(token) {
    sessionStorage.setItem(KEY, token);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
  },
};

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

let onUnauthorized = () => {};
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

function headers(extra = {}) {
  const result = { ...extra };
  if (session.token) result.Authorization = `Bearer ${session.token}`;
  return result;
}

async function parse(response) {
  const type = response.headers.get("content-type") || "";
  if (type.includes("json")) return response.json();
  return response.text();
}

function failure(status, data) {
  const error = data && typeof data === "object" ? data.error || {} : {};
  const message = error.message || (typeof data === "string" && data) || `HTTP ${status}`;
  return new ApiError(status, error.code || "http_error", String(message), error.details);
}

export async function api(method, path, body, extra = {}) {
  const init = { method, headers: headers(extra), cache: "no-store", credentials: "omit" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await parse(response);
  if (response.status === 401) onUnauthorized();
  if (!response.ok) throw failure(response.status, data);
  return data;
}

export const get = (path) => api("GET", path);

// A raw call (the invoke panel): any status is an answer, not an error. With onHead, the
// answer is read as it arrives (a streamed answer, docs/streaming.md): onHead gets the
// status and headers at once and returns a function that is given the text so far after
// each chunk; signal (an AbortController's) stops the read.
export async function call(method, path, body, contentType, onHead, signal) {
  const init = { method, headers: headers(), cache: "no-store", credentials: "omit", signal };
  if (body !== undefined && body !== "") {
    init.headers["Content-Type"] = contentType;
    init.body = body;
  }
  const started = performance.now();
  const response = await fetch(path, init);
  const head = {
    status: response.status,
    type: response.headers.get("content-type") || "",
    headers: [...response.headers.entries()],
    ms: performance.now() - started,
  };
  let text = "";
  if (onHead && response.body) {
    const progress = onHead(head);
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      progress(text);
    }
    text += decoder.decode();
  } else {
    text = await response.text();
  }
  return { ...head, text, ms: performance.now() - started };
}

// A server-sent event stream (the log stream): each event's data, parsed, to onEvent. The
// token goes in the Authorization header (EventSource cannot send one), so this reads the
// body itself. A stream the gateway ends (after an hour) is opened again, going on from
// there; abort() stops it.
export function stream(path, onEvent, onError) {
  const controller = new AbortController();
  let url = path;
  async function run() {
    while (!controller.signal.aborted) {
      const init = { headers: headers(), cache: "no-store", credentials: "omit", signal: controller.signal };
      const response = await fetch(url, init);
      if (!response.ok) throw failure(response.status, await parse(response));
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let pending = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        pending += value;
        const frames = pending.split("\n\n");
        pending = frames.pop();
        for (const frame of frames) {
          const data = frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) onEvent(JSON.parse(data));
        }
      }
      url = path.replace(/([?&]tail=)\d+/, "$10");
    }
  }
  run().catch((error) => {
    if (!controller.signal.aborted) onError(error);
  });
  return () => controller.abort();
}

// fetch() cannot report upload progress; XMLHttpRequest can.
export function upload(path, blob, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    for (const [name, value] of Object.entries(headers({ "Content-Type": "application/zip" }))) {
      xhr.setRequestHeader(name, value);
    }
    xhr.responseType = "json";
    xhr.upload.addEventListener("progress", (event) => {
      if (event.lengthComputable) onProgress(event.loaded, event.total);
    });
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.response);
      else reject(failure(xhr.status, xhr.response));
    });
    xhr.addEventListener("error", () => reject(new ApiError(0, "network", "the upload failed (network error)")));
    xhr.send(blob);
  });
}

export const enc = encodeURIComponent;
