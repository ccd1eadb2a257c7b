// <botshield-verify>: the inline-verification web widget, /sdk.js (a plain script: <script src=".../sdk.js" defer>).
//
//   <botshield-verify site-key="pk_live_…" scope="checkout" platform-user-ref="acct_123"
//                     betas="inline-passkey" scan-mode="modal" theme="auto"></botshield-verify>
//
// On tap it opens a verification request for the site key's partner (POST /operations/widget/create-verification; the
// server checks this page's origin against the key). Phones open the hand-off page; desktops show its QR code, or, with
// the `inline-passkey` beta, the passkey frame on the hosted pages' origin, which confirms in place. Any frame result
// other than `verified` shows the QR code. The element fires `botshield:success` {request_id} and `botshield:failure`
// {reason}; no token ever reaches the page: the partner's server reads the outcome with its API key.
(() => {
  "use strict";
  const api = new URL(document.currentScript?.src || location.href).origin;
  const pollMilliseconds = 3000;
  const frameMilliseconds = 90000;

  const css = `
    :host { display: inline-block; font-family: system-ui, sans-serif; line-height: 1.4; }
    .box { color: #1d1d1f; }
    :host([theme="dark"]) .box { color: #eee; }
    button { padding: 0.6rem 1.1rem; font: inherit; font-weight: 600; border: 0; border-radius: 8px; background: #8a4b08;
             color: #fff; cursor: pointer; }
    button:disabled { opacity: 0.6; cursor: wait; }
    .panel { margin-top: 0.75rem; padding: 0.75rem; border-radius: 10px; background: #fff; color: #1d1d1f;
             box-shadow: 0 2px 12px rgb(0 0 0 / 18%); }
    :host([theme="dark"]) .panel { background: #2a2825; color: #eee; }
    .modal { position: fixed; inset: 0; display: flex; align-items: center; justify-content: center; background: rgb(0 0 0 / 45%);
             z-index: 2147483647; }
    .modal .panel { margin: 0; }
    img.qr { display: block; width: 220px; height: 220px; background: #fff; }
    iframe { display: block; width: 320px; height: 110px; border: 0; }
    .note { margin: 0.5rem 0 0; font-size: 0.9rem; }
    .close { margin-top: 0.5rem; background: #e8dccb; color: #1d1d1f; }
    @media (prefers-color-scheme: dark) {
      :host([theme="auto"]) .box, :host(:not([theme])) .box { color: #eee; }
      :host([theme="auto"]) .panel, :host(:not([theme])) .panel { background: #2a2825; color: #eee; }
    }`;

  const isPhone = () => /Android|iPhone|iPad|iPod|Mobile/i.test(navigator.userAgent)
    || (matchMedia("(pointer: coarse)").matches && !matchMedia("(pointer: fine)").matches);

  class BotShieldVerify extends HTMLElement {
    static observedAttributes = ["site-key", "scope", "scan-mode", "betas", "platform-user-ref", "theme"];
    #root = this.attachShadow({ mode: "closed" });
    #button;
    #panel;
    #run = 0;
    #verified = false;

    constructor() {
      super();
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(css);
      this.#root.adoptedStyleSheets = [sheet];
      const box = document.createElement("div");
      box.className = "box";
      this.#button = document.createElement("button");
      this.#button.type = "button";
      this.#button.textContent = "Verify I'm human";
      this.#button.addEventListener("click", () => this.#start());
      box.append(this.#button);
      this.#root.append(box);
    }

    disconnectedCallback() {
      this.#run += 1;
      this.#close();
    }

    attributeChangedCallback() {}

    get #betas() { return (this.getAttribute("betas") || "").split(/\s+/).filter(Boolean); }

    async #start() {
      if (this.#verified) return;
      const run = ++this.#run;
      this.#button.disabled = true;
      this.#close();
      try {
        const body = { site_key: this.getAttribute("site-key") || "", scope: this.getAttribute("scope") || "" };
        const ref = this.getAttribute("platform-user-ref");
        if (ref) body.partner_user_ref = ref;
        const created = await call("POST", "/operations/widget/create-verification", body);
        if (run !== this.#run) return;
        if (isPhone()) {
          this.#showLink(created);
          window.open(created.web_url, "_blank", "noopener,noreferrer");
        } else if (this.#betas.includes("inline-passkey") && window.PublicKeyCredential) {
          this.#showFrame(created, run);
        } else {
          this.#showQR(created);
        }
        this.#poll(created.request_id, run);
      } catch (error) {
        if (run === this.#run) this.#fail(error.reason || "network_error");
      } finally {
        this.#button.disabled = this.#verified;
      }
    }

    // The QR code (the hand-off page's address) in place or in a modal, per scan-mode.
    #showQR(created) {
      const image = document.createElement("img");
      image.className = "qr";
      image.alt = "Scan with your phone to confirm";
      image.src = created.qr_code_url;
      const note = document.createElement("p");
      note.className = "note";
      note.textContent = "Scan with your phone's camera to confirm with your passkey.";
      this.#open([image, note], this.getAttribute("scan-mode") !== "inline");
    }

    #showLink(created) {
      const link = document.createElement("a");
      link.href = created.web_url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      link.textContent = "Open the confirmation page";
      this.#open([link], false);
    }

    // The passkey frame on the hosted pages' origin; it reports only its outcome, by postMessage from that origin.
    #showFrame(created, run) {
      const appOrigin = new URL(created.web_url).origin;
      const frame = document.createElement("iframe");
      frame.title = "Confirm with your passkey";
      frame.allow = `publickey-credentials-get ${appOrigin}`;
      const fragment = new URLSearchParams({ request_id: created.request_id, origin: location.origin });
      frame.src = `${appOrigin}/frame/inline-passkey?site_key=${encodeURIComponent(this.getAttribute("site-key") || "")}#${fragment}`;
      let settled = false;
      const settle = (outcome) => {
        if (settled || run !== this.#run) return;
        settled = true;
        removeEventListener("message", listen);
        clearTimeout(timer);
        if (outcome === "verified") this.#succeed(created.request_id);
        else this.#showQR(created);
      };
      const listen = (event) => {
        if (event.origin !== appOrigin || event.source !== frame.contentWindow || event.data?.type !== "botshield:inline") return;
        settle(String(event.data.outcome));
      };
      const timer = setTimeout(() => settle("timeout"), frameMilliseconds);
      addEventListener("message", listen);
      this.#open([frame], false);
    }

    // Polls the request's status until it is no longer pending (whichever way it was completed).
    async #poll(requestID, run) {
      while (run === this.#run) {
        await new Promise((resolve) => setTimeout(resolve, pollMilliseconds));
        if (run !== this.#run) return;
        let status;
        try {
          status = (await call("GET", `/operations/widget/status?request_id=${encodeURIComponent(requestID)}`)).status;
        } catch {
          continue;
        }
        if (run !== this.#run) return;
        if (status === "completed") return this.#succeed(requestID);
        if (status !== "pending") return this.#fail(status);
      }
    }

    #succeed(requestID) {
      this.#run += 1;
      this.#close();
      this.#button.textContent = "Verified \u2713";
      this.#button.disabled = true;
      this.#verified = true;
      this.dataset.state = "verified";
      this.dispatchEvent(new CustomEvent("botshield:success", { detail: { request_id: requestID }, bubbles: true, composed: true }));
    }

    #fail(reason) {
      this.#run += 1;
      this.#close();
      this.dataset.state = "failed";
      this.dispatchEvent(new CustomEvent("botshield:failure", { detail: { reason }, bubbles: true, composed: true }));
    }

    #open(children, modal) {
      this.#close();
      const panel = document.createElement("div");
      panel.className = "panel";
      panel.append(...children);
      const close = document.createElement("button");
      close.type = "button";
      close.className = "close";
      close.textContent = "Cancel";
      close.addEventListener("click", () => {
        this.#run += 1;
        this.#close();
      });
      panel.append(close);
      if (modal) {
        this.#panel = document.createElement("div");
        this.#panel.className = "modal";
        this.#panel.append(panel);
      } else {
        this.#panel = panel;
      }
      this.dataset.state = "open";
      this.#root.append(this.#panel);
    }

    #close() {
      this.#panel?.remove();
      this.#panel = null;
    }
  }

  async function call(method, path, body) {
    const response = await fetch(api + path, {
      method, credentials: "omit", referrerPolicy: "no-referrer",
      headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const answer = await response.json();
    if (answer?.data?.error) throw Object.assign(new Error(answer.data.error.message), { reason: answer.data.error.message });
    return answer.data.data;
  }

  if (!customElements.get("botshield-verify")) customElements.define("botshield-verify", BotShieldVerify);
})();
