const axios = require("axois");
exports.handle = async () => (await axios.get("https://api.example.com/health")).data;
