const { execFile } = require("child_process");

exports.handler = (event, context, callback) => {
  execFile("ffprobe", ["-v", "error", "-show_format", "-of", "json", event.url], { timeout: 15000 }, (err, stdout, stderr) => {
    if (err) return callback(null, { statusCode: 500, body: stderr.slice(-500) });
    callback(null, { statusCode: 200, body: stdout });
  });
};
