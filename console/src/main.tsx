// The console's entry: the router under /console or /insight (mount.ts) and the app.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './App.js';
import { basename } from './mount.js';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('The page has no #root element');
createRoot(root).render(
  <StrictMode>
    <BrowserRouter basename={basename()}>
      <App />
    </BrowserRouter>
  </StrictMode>,
);
