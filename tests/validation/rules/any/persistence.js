// ruleid: js-input-capture-library
const clipboardy = require("clipboardy");
// ruleid: js-input-capture-library
const robot = require("robotjs");
// ok: js-input-capture-library
const clip = require("clip-path-utils");
// ok: js-input-capture-library
const copyButton = require("clipboard");
const cp = require("child_process");
const fs = require("fs");

function steal() {
  // ruleid: any-clipboard-command
  return cp.execSync("pbpaste").toString();
}

function persist(home) {
  // ruleid: any-persistence-location
  fs.appendFileSync(home + "/.bashrc", "node /tmp/u.js &\n");
  // ok: any-persistence-location
  const css = ".profile-card";
  return css;
}
