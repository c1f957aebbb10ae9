// Driving VS Code's workbench in the page: the command palette, quick open, CodeLens,
// hovers, editor text, decorations and the plan tree. Selectors are VS Code's own classes.

export class Workbench {
  constructor(page, { log = () => {} } = {}) {
    this.page = page;
    this.log = log;
  }

  async waitReady(timeout = 90000) {
    await this.page.waitForSelector('.monaco-workbench .part.editor', { timeout });
    await this.page.waitForSelector('.statusbar', { timeout });
  }

  async dismissNotifications() {
    await this.runCommand('Notifications: Clear All Notifications').catch(() => {});
  }

  /** Runs a palette command by its visible title. */
  async runCommand(title, { timeout = 15000 } = {}) {
    const input = this.page.locator('.quick-input-widget .quick-input-box input');
    await this.page.keyboard.press('Escape');
    await this.page.keyboard.press('F1');
    await input.waitFor({ state: 'visible', timeout });
    await input.fill(`>${title}`);
    const row = this.page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ state: 'visible', timeout });
    await input.press('Enter');
  }

  /** Picks an item of an open quick pick by typing a filter and pressing Enter. */
  async pick(filter, rowText, { timeout = 15000 } = {}) {
    const input = this.page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout });
    await input.fill(filter);
    const row = this.page.locator('.quick-input-widget .monaco-list-row', { hasText: rowText ?? filter }).first();
    await row.waitFor({ state: 'visible', timeout });
    // Click the row itself: Enter would take the first fuzzy match, which may be another.
    await row.click();
  }

  async openFile(name, { timeout = 20000 } = {}) {
    await this.page.keyboard.press('Escape');
    await this.page.keyboard.press('Control+P');
    await this.pick(name, name, { timeout });
    await this.page.locator('.tabs-container .tab.active', { hasText: name }).waitFor({ timeout });
    await this.page.locator('.editor-instance .view-lines').first().waitFor({ timeout });
  }

  /** The visible text of the active code editor (only rendered lines; keep files short). */
  async editorText() {
    return this.page.evaluate(() => {
      const editors = [...document.querySelectorAll('.editor-group-container.active .monaco-editor')];
      const ed = editors.find((e) => e.closest('.monaco-diff-editor') === null) ?? editors[0];
      if (!ed) return '';
      const lines = [...ed.querySelectorAll('.view-lines .view-line')];
      lines.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
      return lines.map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
    });
  }

  async waitForEditorText(predicate, what, timeout = 20000) {
    const deadline = Date.now() + timeout;
    let text = '';
    while (Date.now() < deadline) {
      text = await this.editorText();
      if (predicate(text)) return text;
      await this.page.waitForTimeout(200);
    }
    throw new Error(`timed out waiting for the editor to ${what}; it shows:\n${text}`);
  }

  /** Texts of the CodeLens rows in the active editor, each like "Accept (…) | Reject | Diff". */
  async codeLenses() {
    return this.page.locator('.editor-group-container.active .codelens-decoration').allTextContents();
  }

  codeLensLink(rowText, linkText) {
    return this.page
      .locator('.editor-group-container.active .codelens-decoration', { hasText: rowText })
      .locator('a', { hasText: linkText })
      .first();
  }

  // Go to Line can be closed under the test's hands (a notification or a job's message taking the
  // focus as it opens): it is opened again, a few times, before the test fails.
  async gotoLine(line) {
    const input = this.page.locator('.quick-input-widget .quick-input-box input');
    for (let attempt = 1; ; ++attempt) {
      try {
        await this.page.keyboard.press('Escape');
        await this.page.keyboard.press('Control+G');
        await input.waitFor({ state: 'visible', timeout: 5000 });
        await input.fill(`:${line}`, { timeout: 5000 });
        await input.press('Enter', { timeout: 5000 });
        await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 5000 });
        return;
      } catch (e) {
        if (attempt === 4) throw e;
      }
    }
  }

  /** Shows the hover at the cursor with the keyboard (Ctrl+K Ctrl+I) and returns its text. */
  async hoverAtCursor(expect, timeout = 15000) {
    const deadline = Date.now() + timeout;
    let text = '';
    while (Date.now() < deadline) {
      await this.page.keyboard.press('Control+K');
      await this.page.keyboard.press('Control+I');
      const hover = this.page.locator('.monaco-hover:not(.hidden)').first();
      try {
        await hover.waitFor({ state: 'visible', timeout: 3000 });
        text = await hover.innerText();
        if (expect.test(text)) return text;
      } catch { /* not shown yet: the host may still be answering */ }
      await this.page.waitForTimeout(500);
    }
    throw new Error(`no hover matching ${expect}; last hover text: ${text}`);
  }

  /** End-of-line decoration texts (rendered as ::after content) by the text of their line. */
  async inlineDecorations() {
    return this.page.evaluate(() => {
      const out = [];
      const ed = document.querySelector('.editor-group-container.active .monaco-editor');
      if (!ed) return out;
      for (const line of ed.querySelectorAll('.view-lines .view-line')) {
        for (const span of line.querySelectorAll('span span')) {
          const c = getComputedStyle(span, '::after').content;
          if (c && c !== 'none' && c !== 'normal') {
            out.push({ line: line.textContent.replace(/\u00a0/g, ' ').trim(), text: c.replace(/^"|"$/g, '').replace(/\\"/g, '"').trim() });
          }
        }
      }
      return out;
    });
  }

  /** Rows of the StitchCUDA plan tree. */
  async planRows() {
    return this.page.locator('.pane-body .monaco-list-row').evaluateAll((rows) =>
      rows.filter((r) => r.closest('[id="workbench.view.extension.stitchcuda"]') || r.closest('.pane')?.querySelector('.pane-header')?.textContent?.includes('Plan'))
        .map((r) => r.textContent.trim()));
  }

  async statusBarText() {
    const items = await this.page.locator('.statusbar-item').allTextContents();
    return items.find((t) => t.includes('StitchCUDA')) ?? '';
  }

  async screenshot(dir, name) {
    const path = `${dir}/${name}.png`;
    await this.page.screenshot({ path });
    this.log(`screenshot ${path}`);
  }
}

export async function waitFor(fn, what, timeout = 20000, interval = 250) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, interval));
  }
  throw new Error(`timed out waiting for ${what}`);
}
