const Handlebars = require("handlebars");
const tpl = Handlebars.compile("<h1>{{title}}</h1><ul>{{#each items}}<li>{{this}}</li>{{/each}}</ul>");
exports.handle = async (event) => ({
  statusCode: 200,
  headers: { "content-type": "text/html" },
  body: tpl({ title: event.query.title || "List", items: (event.body && event.body.items) || [] }),
});
