// The parse page of `keras-ordered serve`: lists the models, sends the
// sentences to /api/parse, and shows each sentence's drawn tree (an SVG
// image) and its brackets. No library, nothing loaded from elsewhere.
"use strict";

function element(tag, attributes, text) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    node.setAttribute(key, value);
  }
  if (text !== undefined) node.textContent = text;
  return node;
}

function showError(message) {
  const box = document.getElementById("error");
  box.textContent = message;
  box.hidden = !message;
}

async function loadModels() {
  const response = await fetch("/api/models");
  const answer = await response.json();
  const box = document.getElementById("models");
  answer.models.forEach((model, index) => {
    const label = element("label");
    const input = element("input", {type: "checkbox", name: "model", value: model.name});
    input.checked = index === 0;
    label.append(input, " " + model.name);
    box.append(label);
  });
  if (!answer.models.length) showError("This server has no model of syntactic distances to draw.");
}

function showSentence(results, sentence, number) {
  const block = element("article", {class: "sentence", "data-number": String(number)});
  block.append(element("h2", {}, sentence.tokens.join(" ")));
  const image = element("img", {
    class: "tree",
    alt: sentence.brackets,
    src: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(sentence.svg),
  });
  block.append(image);
  const line = element("p", {class: "brackets"});
  const code = element("code", {}, sentence.brackets);
  const copy = element("button", {type: "button"}, "Copy");
  copy.addEventListener("click", () => navigator.clipboard.writeText(sentence.brackets));
  line.append(code, copy);
  block.append(line);
  if (sentence.votes) {
    block.append(element("p", {class: "votes"},
      `Averaged over ${sentence.members} models; each constituent is labelled with its votes.`));
  }
  results.append(block);
}

async function parse(event) {
  event.preventDefault();
  showError("");
  const models = [...document.querySelectorAll("input[name=model]:checked")].map((m) => m.value);
  const request = {
    text: document.getElementById("sentences").value,
    models: models,
    decoder: document.getElementById("decoder").value,
  };
  const results = document.getElementById("results");
  results.replaceChildren();
  results.setAttribute("aria-busy", "true");
  try {
    const response = await fetch("/api/parse", {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(request),
    });
    const answer = await response.json();
    if (!response.ok) {
      showError(answer.error || `Error ${response.status}`);
      return;
    }
    answer.sentences.forEach((sentence, i) => showSentence(results, sentence, i + 1));
  } catch (error) {
    showError(String(error));
  } finally {
    results.setAttribute("aria-busy", "false");
    results.dataset.done = String(Date.now());
  }
}

document.getElementById("parse-form").addEventListener("submit", parse);
loadModels().catch((error) => showError(String(error)));
