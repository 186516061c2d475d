/**
 * The script-tag build's entry (`/embed/parley-assistant.js`): defines `<parley-assistant>`.
 *
 *   <script type="module" src="https://parley.example/embed/parley-assistant.js"></script>
 *   <parley-assistant app-id="app_..." token-url="/parley-token"></parley-assistant>
 */
import { defineParleyAssistant } from "./element.tsx";

export { type ErrorDetail, ParleyAssistantElement, type ReadyDetail } from "./element.tsx";

defineParleyAssistant();
