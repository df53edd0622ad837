// Importing `svclab/element` defines the <svclab-example> custom element.
export class SvclabExample extends HTMLElement {}
declare global {
  interface HTMLElementTagNameMap {
    "svclab-example": SvclabExample;
  }
}
