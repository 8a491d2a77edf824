"use strict";(self.rspackChunk_coursekit_learner_panel=self.rspackChunk_coursekit_learner_panel||[]).push([[700],{646(e,a,n){var r=n(601),o=n.n(r),c=n(314),t=(n.n(c))()(o());t.push([e.id,`/* The 채점 결과 panel: one block per function, readable in a narrow sidebar and in grey
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
.ck-panel .ck-ok { color: var(--jp-ui-font-color2); }
.ck-panel .ck-open { margin: 8px 0; }
.ck-panel .ck-attempts { padding-left: 20px; }
.ck-panel .ck-attempt .ck-time { margin-right: 8px; color: var(--jp-ui-font-color2); }
.ck-panel .ck-time { font-size: var(--jp-ui-font-size0); }
/* The picture of a failed function on the page's example (src/pictures.ts): the values are
   printed in the cells and the differing ones carry a dashed border and ≠, so the colours
   are not needed to read it. */
.ck-panel .ck-picture { margin-top: 6px; }
.ck-panel .ck-caption { font-weight: bold; margin: 4px 0; }
.ck-panel .ck-panels { display: flex; flex-direction: column; gap: 6px; }
.ck-panel .ck-pair { display: flex; flex-wrap: wrap; gap: 6px; }
.ck-panel .ck-heat { border-collapse: separate; border-spacing: 1px; font-size: var(--jp-ui-font-size0); }
.ck-panel .ck-heat caption { text-align: left; color: var(--jp-ui-font-color2); }
.ck-panel .ck-heat th { font-weight: normal; padding: 0 3px; white-space: nowrap; vertical-align: middle; }
.ck-panel .ck-heat td { text-align: center; padding: 1px 3px; border: 2px solid transparent;
  font-variant-numeric: tabular-nums; white-space: nowrap; }
.ck-panel .ck-heat td.ck-off { border: 2px dashed #000; font-weight: bold; }
.ck-panel .ck-heat td.ck-off::after { content: ' ≠'; }
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
`,""]),n.d(a,{},{A:t})},314(e){e.exports=function(e){var a=[];return a.toString=function(){return this.map(function(a){var n="",r=void 0!==a[5];return a[4]&&(n+="@supports (".concat(a[4],") {")),a[2]&&(n+="@media ".concat(a[2]," {")),r&&(n+="@layer".concat(a[5].length>0?" ".concat(a[5]):""," {")),n+=e(a),r&&(n+="}"),a[2]&&(n+="}"),a[4]&&(n+="}"),n}).join("")},a.i=function(e,n,r,o,c){"string"==typeof e&&(e=[[null,e,void 0]]);var t={};if(r)for(var p=0;p<this.length;p++){var l=this[p][0];null!=l&&(t[l]=!0)}for(var i=0;i<e.length;i++){var s=[].concat(e[i]);r&&t[s[0]]||(void 0!==c&&(void 0===s[5]||(s[1]="@layer".concat(s[5].length>0?" ".concat(s[5]):""," {").concat(s[1],"}")),s[5]=c),n&&(s[2]&&(s[1]="@media ".concat(s[2]," {").concat(s[1],"}")),s[2]=n),o&&(s[4]?(s[1]="@supports (".concat(s[4],") {").concat(s[1],"}"),s[4]=o):s[4]="".concat(o)),a.push(s))}},a}},601(e){e.exports=function(e){return e[1]}},72(e){var a=[];function n(e){for(var n=-1,r=0;r<a.length;r++)if(a[r].identifier===e){n=r;break}return n}function r(e,r){for(var o={},c=[],t=0;t<e.length;t++){var p=e[t],l=r.base?p[0]+r.base:p[0],i=o[l]||0,s="".concat(l," ").concat(i);o[l]=i+1;var f=n(s),d={css:p[1],media:p[2],sourceMap:p[3],supports:p[4],layer:p[5]};if(-1!==f)a[f].references++,a[f].updater(d);else{var k=function(e,a){var n=a.domAPI(a);return n.update(e),function(a){a?(a.css!==e.css||a.media!==e.media||a.sourceMap!==e.sourceMap||a.supports!==e.supports||a.layer!==e.layer)&&n.update(e=a):n.remove()}}(d,r);r.byIndex=t,a.splice(t,0,{identifier:s,updater:k,references:1})}c.push(s)}return c}e.exports=function(e,o){var c=r(e=e||[],o=o||{});return function(e){e=e||[];for(var t=0;t<c.length;t++){var p=n(c[t]);a[p].references--}for(var l=r(e,o),i=0;i<c.length;i++){var s=n(c[i]);0===a[s].references&&(a[s].updater(),a.splice(s,1))}c=l}}},659(e){var a={};e.exports=function(e,n){var r=function(e){if(void 0===a[e]){var n=document.querySelector(e);if(window.HTMLIFrameElement&&n instanceof window.HTMLIFrameElement)try{n=n.contentDocument.head}catch(e){n=null}a[e]=n}return a[e]}(e);if(!r)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");r.appendChild(n)}},540(e){e.exports=function(e){var a=document.createElement("style");return e.setAttributes(a,e.attributes),e.insert(a,e.options),a}},56(e,a,n){e.exports=function(e){var a=n.nc;a&&e.setAttribute("nonce",a)}},825(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var a=e.insertStyleElement(e);return{update:function(n){var r,o,c;r="",n.supports&&(r+="@supports (".concat(n.supports,") {")),n.media&&(r+="@media ".concat(n.media," {")),(o=void 0!==n.layer)&&(r+="@layer".concat(n.layer.length>0?" ".concat(n.layer):""," {")),r+=n.css,o&&(r+="}"),n.media&&(r+="}"),n.supports&&(r+="}"),(c=n.sourceMap)&&"u">typeof btoa&&(r+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(c))))," */")),e.styleTagTransform(r,a,e.options)},remove:function(){var e;null===(e=a).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,a){if(a.styleSheet)a.styleSheet.cssText=e;else{for(;a.firstChild;)a.removeChild(a.firstChild);a.appendChild(document.createTextNode(e))}}},959(e,a,n){var r=n(72),o=n.n(r),c=n(825),t=n.n(c),p=n(659),l=n.n(p),i=n(56),s=n.n(i),f=n(540),d=n.n(f),k=n(113),u=n.n(k),b=n(646),g={};g.styleTagTransform=u(),g.setAttributes=s(),g.insert=l().bind(null,"head"),g.domAPI=t(),g.insertStyleElement=d(),o()(b.A,g),b.A&&b.A.locals&&b.A.locals}}]);