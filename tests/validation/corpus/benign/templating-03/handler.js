const Handlebars = require("handlebars");

const receipt = Handlebars.compile("<h1>Receipt {{number}}</h1><ul>{{#each lines}}<li>{{name}}: {{price}}</li>{{/each}}</ul>");

exports.handler = async (event) => ({
  statusCode: 200,
  headers: { "content-type": "text/html" },
  body: receipt({ number: event.number, lines: event.lines || [] }),
});
