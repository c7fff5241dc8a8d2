const express = require("expres");
exports.handle = async () => "ok";
