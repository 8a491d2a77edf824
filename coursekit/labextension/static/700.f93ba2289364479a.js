"use strict";(self.rspackChunk_coursekit_learner_panel=self.rspackChunk_coursekit_learner_panel||[]).push([[700],{646(e,n,a){var r=a(601),o=a.n(r),c=a(314),t=(a.n(c))()(o());t.push([e.id,`/* The 채점 결과 panel: one block per function, readable in a narrow sidebar and in grey
   scale (a mark and the points say passed or failed, not the colour alone). */
.ck-panel { padding: 8px 12px; overflow-y: auto; font-size: var(--jp-ui-font-size1); min-width: 260px; }
.ck-panel .ck-heading { font-size: var(--jp-ui-font-size2); margin: 10px 0 6px; }
.ck-panel .ck-status { margin: 6px 0; }
.ck-panel .ck-error { color: var(--jp-error-color1); }
.ck-panel .ck-total { font-size: var(--jp-ui-font-size2); margin: 6px 0; }
.ck-panel .ck-function, .ck-panel .ck-answer {
  border-left: 3px solid var(--jp-border-color1); padding: 4px 8px; margin: 6px 0;
  overflow-wrap: anywhere; word-break: keep-all;
}
.ck-panel .ck-failed { border-left-color: var(--jp-error-color1); }
.ck-panel .ck-passed { border-left-color: var(--jp-success-color1); }
.ck-panel .ck-line { display: flex; justify-content: space-between; gap: 8px; }
.ck-panel .ck-name, .ck-panel .ck-points { font-family: var(--jp-code-font-family); font-weight: bold; }
.ck-panel .ck-failed .ck-points::before { content: '✗ '; }
.ck-panel .ck-passed .ck-points::before { content: '✓ '; }
.ck-panel .ck-message { margin-top: 4px; white-space: pre-wrap; }
.ck-panel .ck-mistake { margin-top: 4px; }
.ck-panel .ck-fact { color: var(--jp-ui-font-color2); margin-top: 2px; font-size: var(--jp-ui-font-size0); }
.ck-panel .ck-hint { margin-top: 4px; padding-left: 6px; border-left: 3px solid var(--jp-brand-color1); }
.ck-panel .ck-ok { color: var(--jp-ui-font-color2); }
.ck-panel .ck-open { margin: 8px 0; }
.ck-panel .ck-attempts { padding-left: 20px; }
.ck-panel .ck-attempt .ck-time { margin-right: 8px; color: var(--jp-ui-font-color2); }
.ck-panel .ck-time { font-size: var(--jp-ui-font-size0); }
/* The picture of a failed function on the page's example (src/pictures.ts): the values are
   printed in the cells and the differing ones carry a dashed border and ≠, so the colours
   are not needed to read it. */
.ck-panel .ck-picture { margin-top: 6px; overflow-x: auto; }
.ck-panel .ck-caption { font-weight: bold; margin: 4px 0; }
.ck-panel .ck-panels { display: flex; flex-direction: column; gap: 6px; container-type: inline-size; }
.ck-panel .ck-pair { display: flex; flex-wrap: wrap; gap: 6px; }
.ck-panel .ck-heat { border-collapse: separate; border-spacing: 1px; font-size: var(--jp-ui-font-size0); }
.ck-panel .ck-heat caption { text-align: left; color: var(--jp-ui-font-color2); }
.ck-panel .ck-heat th { font-weight: normal; padding: 0 3px; white-space: nowrap; vertical-align: middle; }
.ck-panel .ck-heat td { text-align: center; padding: 0 2px; border: 2px solid transparent;
  font-variant-numeric: tabular-nums; white-space: nowrap; }
.ck-panel .ck-heat td.ck-off { border: 2px dashed #000; box-shadow: inset 0 0 0 1px #fff; font-weight: bold; }
@container (min-width: 360px) { .ck-panel .ck-heat td.ck-off::after { content: ' ≠'; } }
.ck-panel .ck-b0 { background: #f7fbff; color: #000; }
.ck-panel .ck-b1 { background: #deebf7; color: #000; }
.ck-panel .ck-b2 { background: #c6dbef; color: #000; }
.ck-panel .ck-b3 { background: #9ecae1; color: #000; }
.ck-panel .ck-b4 { background: #6baed6; color: #000; }
.ck-panel .ck-b5 { background: #4292c6; color: #fff; }
.ck-panel .ck-b6 { background: #2171b5; color: #fff; }
.ck-panel .ck-b7 { background: #08519c; color: #fff; }
.ck-panel .ck-b8 { background: #08306b; color: #fff; }
.ck-panel .ck-b9 { background: #041f45; color: #fff; }
.ck-panel .ck-r1 { background: #fee6ce; color: #000; }
.ck-panel .ck-r2 { background: #fdd0a2; color: #000; }
.ck-panel .ck-r3 { background: #fdae6b; color: #000; }
.ck-panel .ck-r4 { background: #fd8d3c; color: #000; }
.ck-panel .ck-r5 { background: #f16913; color: #fff; }
.ck-panel .ck-r6 { background: #d94801; color: #fff; }
.ck-panel .ck-r7 { background: #a63603; color: #fff; }
.ck-panel .ck-r8 { background: #7f2704; color: #fff; }
.ck-panel .ck-r9 { background: #5a1b02; color: #fff; }
.ck-panel .ck-flow { display: flex; flex-wrap: wrap; gap: 4px; align-items: flex-start; }
.ck-panel .ck-step { border: 1px solid var(--jp-border-color1); padding: 2px 6px; text-align: center; }
.ck-panel .ck-step > span { display: block; }
.ck-panel .ck-step.ck-left { border: 2px dashed #000; font-weight: bold; }
`,""]),a.d(n,{},{A:t})},314(e){e.exports=function(e){var n=[];return n.toString=function(){return this.map(function(n){var a="",r=void 0!==n[5];return n[4]&&(a+="@supports (".concat(n[4],") {")),n[2]&&(a+="@media ".concat(n[2]," {")),r&&(a+="@layer".concat(n[5].length>0?" ".concat(n[5]):""," {")),a+=e(n),r&&(a+="}"),n[2]&&(a+="}"),n[4]&&(a+="}"),a}).join("")},n.i=function(e,a,r,o,c){"string"==typeof e&&(e=[[null,e,void 0]]);var t={};if(r)for(var p=0;p<this.length;p++){var l=this[p][0];null!=l&&(t[l]=!0)}for(var i=0;i<e.length;i++){var s=[].concat(e[i]);r&&t[s[0]]||(void 0!==c&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=c),a&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=a),o&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=o):s[4]="".concat(o)),n.push(s))}},n}},601(e){e.exports=function(e){return e[1]}},72(e){var n=[];function a(e){for(var a=-1,r=0;r<n.length;r++)if(n[r].identifier===e){a=r;break}return a}function r(e,r){for(var o={},c=[],t=0;t<e.length;t++){var p=e[t],l=r.base?p[0]+r.base:p[0],i=o[l]||0,s="".concat(l," ").concat(i);o[l]=i+1;var f=a(s),d={css:p[1],media:p[2],sourceMap:p[3],supports:p[4],layer:p[5]};if(-1!==f)n[f].references++,n[f].updater(d);else{var k=function(e,n){var a=n.domAPI(n);return a.update(e),function(n){n?(n.css!==e.css||n.media!==e.media||n.sourceMap!==e.sourceMap||n.supports!==e.supports||n.layer!==e.layer)&&a.update(e=n):a.remove()}}(d,r);r.byIndex=t,n.splice(t,0,{identifier:s,updater:k,references:1})}c.push(s)}return c}e.exports=function(e,o){var c=r(e=e||[],o=o||{});return function(e){e=e||[];for(var t=0;t<c.length;t++){var p=a(c[t]);n[p].references--}for(var l=r(e,o),i=0;i<c.length;i++){var s=a(c[i]);0===n[s].references&&(n[s].updater(),n.splice(s,1))}c=l}}},659(e){var n={};e.exports=function(e,a){var r=function(e){if(void 0===n[e]){var a=document.querySelector(e);if(window.HTMLIFrameElement&&a instanceof window.HTMLIFrameElement)try{a=a.contentDocument.head}catch(e){a=null}n[e]=a}return n[e]}(e);if(!r)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");r.appendChild(a)}},540(e){e.exports=function(e){var n=document.createElement("style");return e.setAttributes(n,e.attributes),e.insert(n,e.options),n}},56(e,n,a){e.exports=function(e){var n=a.nc;n&&e.setAttribute("nonce",n)}},825(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var n=e.insertStyleElement(e);return{update:function(a){var r,o,c;r="",a.supports&&(r+="@supports (".concat(a.supports,") {")),a.media&&(r+="@media ".concat(a.media," {")),(o=void 0!==a.layer)&&(r+="@layer".concat(a.layer.length>0?" ".concat(a.layer):""," {")),r+=a.css,o&&(r+="}"),a.media&&(r+="}"),a.supports&&(r+="}"),(c=a.sourceMap)&&"u">typeof btoa&&(r+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(c))))," */")),e.styleTagTransform(r,n,e.options)},remove:function(){var e;null===(e=n).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,n){if(n.styleSheet)n.styleSheet.cssText=e;else{for(;n.firstChild;)n.removeChild(n.firstChild);n.appendChild(document.createTextNode(e))}}},959(e,n,a){var r=a(72),o=a.n(r),c=a(825),t=a.n(c),p=a(659),l=a.n(p),i=a(56),s=a.n(i),f=a(540),d=a.n(f),k=a(113),u=a.n(k),b=a(646),g={};g.styleTagTransform=u(),g.setAttributes=s(),g.insert=l().bind(null,"head"),g.domAPI=t(),g.insertStyleElement=d(),o()(b.A,g),b.A&&b.A.locals&&b.A.locals}}]);