const express = require("express");
const serverless = require("serverless-http");

const app = express();
app.use(express.json({ limit: "100kb" }));

const notes = [];
app.get("/notes", (req, res) => res.json(notes));
app.post("/notes", (req, res) => {
  if (typeof req.body.text !== "string") return res.status(400).json({ error: "text required" });
  const note = { id: notes.length + 1, text: req.body.text.slice(0, 500) };
  notes.push(note);
  res.status(201).json(note);
});

module.exports.handler = serverless(app);
