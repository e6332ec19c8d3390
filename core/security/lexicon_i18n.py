"""The scorer's core ideas in other languages: word stems per language, per concept.

An attacker who knows the scorer reads English writes the same directive in Italian, Russian or
Japanese. Phrase lists do not survive that; the ideas do. Each language lists stems (a stem
matches every form that starts with it: ``ignor`` is "ignora", "ignorare", "ignorate") for the
few concepts a planted instruction is made of:

* ``void``: dismiss or forget, or declare invalid (said of the agent's guidance);
* ``guidance``: instructions, rules, directions, the system prompt;
* ``move``: send, upload, forward, transmit;
* ``data``: the conversation, its history, passwords, keys, credentials;
* ``persona``: "you are now", "pretend to be", "act as";
* ``hide``: "do not tell", "without … knowing", "keep secret";
* ``user``: the user, as the person something is hidden from;
* ``always``: "from now on", "always", "in every reply".

A stem holding a space matches any whitespace there. Japanese, Chinese, Korean and Arabic words
are matched anywhere (no spaces separate words in the first two; the others glue particles or
prefixes on), every other stem only at the start of a word. :mod:`memhost.security.concepts_i18n` builds the
features; this module is only words.
"""

from __future__ import annotations

import re

from memhost.security.lexicon import NOT_NEGATED, NOT_NEGATED_AFTER

#: Stems per language and concept. Turkish stems avoid "ı" and "İ": their case mappings are not
#: one to one, and a stem must match its lower-cased self.
LEXICON: dict[str, dict[str, tuple[str, ...]]] = {
    "es": {"void": ("ignor", "olvid", "omit", "desobedec", "no hagas caso", "haz caso omiso",
                    "inválid", "anulad", "caducad",
                    "pasa por alto", "descart", "desestim"),
           "guidance": ("instrucci", "indicaci", "reglas", "directri", "normas", "órdenes",
                        "prompt del sistema"),
           "move": ("envía", "envia", "enviar", "manda", "sube", "subir", "reenví", "reenvi",
                    "transmit", "publica"),
           "data": ("conversaci", "historial", "contraseñ", "credencial", "claves", "chat"),
           "persona": ("ahora eres", "eres ahora", "a partir de ahora eres", "finge ser",
                       "actúa como", "actua como", "hazte pasar por"),
           "hide": ("no le digas", "no digas", "no menciones", "no informes", "no cuentes",
                    "sin que el usuario", "a escondidas", "en secreto", "oculta"),
           "user": ("usuari",),
           "always": ("a partir de ahora", "de ahora en adelante", "de aquí en adelante",
                      "desde ahora", "siempre", "en cada respuesta")},
    "fr": {"void": ("ignor", "oubli", "fais abstraction", "faites abstraction", "ne tiens pas compte",
                    "caduqu", "annulé", "invalidé",
                    "ne tenez pas compte", "écarte", "écartez"),
           "guidance": ("instruction", "consigne", "règle", "regle", "directive", "prompt système"),
           "move": ("envoie", "envoy", "transmet", "transfère", "transférer", "téléverse", "televerse",
                    "publie", "fais suivre"),
           "data": ("conversation", "historique", "mot de passe", "mots de passe", "identifiant",
                    "clés", "jeton"),
           "persona": ("tu es maintenant", "tu es désormais", "vous êtes maintenant",
                       "vous êtes désormais", "fais semblant d'être", "joue le rôle",
                       "agis comme", "agissez comme"),
           "hide": ("ne dis rien", "ne dis pas", "ne dites pas", "ne mentionne pas",
                    "sans que l'utilisateur", "à l'insu", "en secret", "cache"),
           "user": ("utilisat",),
           "always": ("désormais", "dorénavant", "à partir de maintenant", "toujours",
                      "à chaque réponse")},
    "de": {"void": ("ignorier", "vergiss", "vergessen", "missacht", "verwirf", "übergeh",
                    "ungültig", "ungueltig", "aufgehoben", "außer kraft", "hinfällig", "nichtig"),
           "guidance": ("anweisung", "regeln", "vorgaben", "instruktion", "befehle", "richtlinie",
                        "systemprompt", "system-prompt", "systemanweisung"),
           "move": ("sende", "senden", "schick", "übermittel", "weiterleit", "leite", "lade",
                    "hochlad"),
           "data": ("verlauf", "unterhaltung", "gespräch", "passw", "zugangsdaten", "schlüssel",
                    "chat"),
           "persona": ("du bist jetzt", "du bist nun", "du bist ab sofort", "ab jetzt bist du",
                       "gib dich als", "verhalte dich wie", "spiel die rolle"),
           "hide": ("sag dem benutzer nichts", "sag dem nutzer nichts", "verschweig",
                    "ohne dass der benutzer", "ohne dass der nutzer", "heimlich", "verheimlich"),
           "user": ("benutzer", "nutzer"),
           "always": ("ab sofort", "von nun an", "ab jetzt", "immer", "in jeder antwort", "bei jeder antwort",
                      "jede antwort")},
    "pt": {"void": ("ignor", "esqueç", "esquec", "desconsider", "desobedeç", "descart", "inválid",
                    "anulad"),
           "guidance": ("instruç", "instruc", "regras", "diretriz", "orientaç"),
           "move": ("envie", "enviar", "envia", "mande", "mandar", "carregue", "encaminh",
                    "transmit", "publique"),
           "data": ("conversa", "histórico", "historico", "senha", "credenciais", "chaves"),
           "persona": ("você é agora", "voce e agora", "agora você é", "agora voce e",
                       "finja ser", "aja como", "atue como"),
           "hide": ("não conte", "nao conte", "não diga", "nao diga", "não mencione",
                    "sem que o usuário", "sem que o utilizador", "em segredo", "esconda"),
           "user": ("usuário", "usuario", "utilizador"),
           "always": ("a partir de agora", "de agora em diante", "sempre", "em cada resposta")},
    "it": {"void": ("ignor", "dimentic", "trascur", "non tener conto", "non tenere conto",
                    "disattend", "scart"),
           "guidance": ("istruzion", "regol", "indicazion", "direttiv", "prompt di sistema"),
           "move": ("invia", "inviare", "manda", "carica", "inoltra", "trasmett", "pubblica"),
           "data": ("cronologia", "conversazion", "chat", "password", "credenzial", "chiav"),
           "persona": ("ora sei", "adesso sei", "d'ora in poi sei", "fingi di essere",
                       "comportati come", "impersona"),
           "hide": ("non dire", "non dirlo", "non menzionare", "non informare", "non rivelare",
                    "senza che l'utente", "di nascosto", "in segreto", "nascondi"),
           "user": ("utent",),
           "always": ("d'ora in poi", "da adesso in poi", "sempre",
                      "in ogni risposta")},
    "nl": {"void": ("negeer", "negeren", "vergeet", "vergeten", "veronachtzaam", "gooi weg"),
           "guidance": ("instructie", "regels", "richtlijn", "aanwijzing", "opdrachten",
                        "systeemprompt"),
           "move": ("stuur", "verstuur", "verzend", "doorsturen"),
           "data": ("wachtwoord", "gesprek", "geschiedenis", "inloggegevens", "sleutel", "chat"),
           "persona": ("je bent nu", "jij bent nu", "u bent nu", "vanaf nu ben je", "doe alsof je",
                       "gedraag je als", "speel de rol"),
           "hide": ("vertel de gebruiker niets", "zeg niets", "niet vertellen", "niet melden",
                    "zonder dat de gebruiker", "in het geheim", "stiekem", "verberg"),
           "user": ("gebruiker",),
           "always": ("vanaf nu", "voortaan", "altijd", "in elk antwoord")},
    "ru": {"void": ("игнорир", "забудь", "забыть", "забудьте", "не обращай внимания",
                    "не обращайте внимания", "пренебреги", "отбрось", "отмени"),
           "guidance": ("инструкц", "правил", "указани", "директив", "системн"),
           "move": ("отправ", "перешли", "пересыла", "переда", "загрузи", "выгрузи", "скинь",
                    "опубликуй"),
           "data": ("переписк", "истори", "разговор", "парол", "ключ", "токен", "учетн", "учётн",
                    "чат"),
           "persona": ("теперь ты", "ты теперь", "отныне ты", "притворись", "веди себя как",
                       "играй роль"),
           "hide": ("не говори", "не сообщай", "не упоминай", "не рассказывай", "скрой",
                    "втайне", "тайно", "незаметно", "без ведома"),
           "user": ("пользовател",),
           "always": ("отныне", "с этого момента", "теперь всегда", "всегда", "в каждом ответе")},
    "pl": {"void": ("zignoruj", "ignoruj", "zapomnij", "pomiń", "pomin", "odrzuć", "lekceważ"),
           "guidance": ("instrukcj", "zasad", "reguł", "polece", "wytyczn", "prompt systemowy"),
           "move": ("wyślij", "wyslij", "wysyłaj", "prześlij", "przeslij", "wrzuć", "przekaż",
                    "udostępnij"),
           "data": ("rozmow", "histori", "hasł", "hasl", "klucz", "dane logowania", "czat"),
           "persona": ("jesteś teraz", "teraz jesteś", "od teraz jesteś", "udawaj",
                       "zachowuj się jak", "wciel się"),
           "hide": ("nie mów", "nie mow", "nie informuj", "nie wspominaj", "ukryj",
                    "bez wiedzy", "potajemnie", "w tajemnicy"),
           "user": ("użytkowni", "uzytkowni"),
           "always": ("od teraz", "od tej pory", "zawsze", "w każdej odpowiedzi")},
    "tr": {"void": ("yoksay", "görmezden gel", "unut", "dikkate alma", "boşver"),
           "guidance": ("talimat", "kural", "yönerge", "komut", "sistem istem"),
           "move": ("gönder", "yükle", "ilet", "aktar", "paylaş"),
           "data": ("sohbet", "geçmiş", "konuşma", "şifre", "parola", "anahtar", "kimlik bilgi"),
           "persona": ("artık sen", "sen artık", "şimdi sen", "gibi davran", "rolüne gir",
                       "taklidi yap"),
           "hide": ("söyleme", "bahsetme", "haber verme", "gizle", "haberi olmadan",
                    "gizlice"),
           "user": ("kullan",),
           "always": ("bundan sonra", "şu andan itibaren", "her zaman", "daima", "her yanıtta")},
    "zh": {"void": ("忽略", "无视", "忽视", "不要理会", "忘记", "忘掉", "不用管", "抛开"),
           "guidance": ("指令", "指示", "规则", "提示", "设定", "说明"),
           "move": ("发送", "发给", "发到", "上传", "转发", "传到", "提交到"),
           "data": ("对话", "聊天记录", "历史记录", "密码", "凭证", "密钥", "令牌"),
           "persona": ("你现在是", "你现在扮演", "你将扮演", "假装你是"),
           "hide": ("不要告诉", "别告诉", "不要让", "保密", "偷偷", "悄悄", "隐瞒"),
           "user": ("用户",),
           "always": ("从现在开始", "从今以后", "今后", "以后每次", "始终", "每次回复", "总是")},
    "ja": {"void": ("無視", "忘れて", "忘れろ", "破棄", "従わない"),
           "guidance": ("指示", "命令", "ルール", "規則", "指令", "プロンプト"),
           "move": ("送信", "送って", "送れ", "送る", "アップロード", "転送", "投稿"),
           "data": ("会話", "履歴", "パスワード", "認証情報", "秘密鍵", "キー", "チャット",
                    "トークン"),
           "persona": ("あなたは今", "今からあなたは", "これからあなたは", "として振る舞",
                       "になりきって", "のふりをして"),
           "hide": ("言わないで", "伝えないで", "知らせないで", "教えないで", "内緒", "秘密に",
                    "隠して", "こっそり"),
           "user": ("ユーザー", "利用者"),
           "always": ("これから", "今後", "常に", "いつも", "毎回")},
    "ko": {"void": ("무시", "잊어", "잊고", "따르지 마"),
           "guidance": ("지시", "지침", "규칙", "명령", "프롬프트"),
           "move": ("보내", "전송", "업로드", "전달", "올려"),
           "data": ("대화", "기록", "비밀번호", "암호", "자격 증명", "토큰"),
           "persona": ("너는 이제", "이제 너는", "당신은 이제", "이제 당신은", "인 척",
                       "처럼 행동"),
           "hide": ("말하지 마", "알리지 마", "숨겨", "몰래", "비밀로"),
           "user": ("사용자", "유저"),
           "always": ("앞으로", "지금부터", "항상", "언제나", "매번")},
    "ar": {"void": ("تجاهل", "انس", "أهمل", "اهمل"),
           "guidance": ("التعليمات", "تعليمات", "القواعد", "الأوامر", "الاوامر", "الإرشادات"),
           "move": ("أرسل", "ارسل", "ارفع", "انشر"),
           "data": ("المحادثة", "السجل", "كلمة المرور", "كلمات المرور", "المفاتيح", "بيانات الاعتماد"),
           "persona": ("أنت الآن", "انت الآن", "انت الان", "تظاهر بأنك", "تصرف ك"),
           "hide": ("لا تخبر", "لا تقل", "لا تذكر", "أخف", "اخف", "سرا", "سراً"),
           "user": ("المستخدم",),
           "always": ("من الآن فصاعدا", "من الآن", "دائما", "دائمًا", "في كل رد")},
    "hi": {"void": ("अनदेखा", "भूल जाओ", "भूल जाएं", "नज़रअंदाज़", "नजरअंदाज"),
           "guidance": ("निर्देश", "नियम", "आदेश", "सिस्टम प्रॉम्प्ट"),
           "move": ("भेज", "अपलोड", "फॉरवर्ड"),
           "data": ("बातचीत", "इतिहास", "पासवर्ड", "चैट", "कुंजी"),
           "persona": ("अब तुम", "अब आप", "होने का नाटक", "की तरह व्यवहार"),
           "hide": ("मत बताना", "मत बताओ", "न बताएं", "न बताना", "छिपा", "चुपके से"),
           "user": ("उपयोगकर्ता", "यूज़र", "यूजर"),
           "always": ("अब से", "हमेशा", "हर जवाब")},
    # Swedish, Danish and Norwegian share most stems; a compound ("systeminstruktioner") is matched
    # by its own stem.
    "sv": {"void": ("ignorera", "strunta i", "glöm", "bortse från", "inte längre gäll", "gäller inte",
                    "ogiltig", "upphäv", "ignorer", "glem", "ikke længere gæld", "ikke lenger gjeld"),
           "guidance": ("instruktion", "systeminstruktion", "regler", "riktlinje", "direktiv",
                        "systemprompt", "anvisning", "instruks", "retningslinje"),
           "move": ("skicka", "vidarebefordra", "ladda upp", "videresend"),
           "data": ("konversation", "historik", "lösenord", "inloggningsuppgift", "chatt",
                    "adgangskode", "passord", "samtale"),
           "persona": ("du är nu", "från och med nu är du", "låtsas vara", "agera som", "bete dig som",
                       "du er nå", "lad som om"),
           "hide": ("berätta inte", "säg inget", "nämn inte", "utan att användaren", "i hemlighet",
                    "dölj", "fortæl ikke", "ikke fortell", "uden at brugeren", "uten at brukeren"),
           "user": ("användar", "brugeren", "brukeren"),
           "always": ("från och med nu", "hädanefter", "alltid", "i varje svar",
                      "fra nå av", "altid")},
    "vi": {"void": ("bỏ qua", "phớt lờ", "không còn hiệu lực", "không còn áp dụng", "vô hiệu",
                    "đừng làm theo", "không tuân theo"),
           "guidance": ("hướng dẫn", "chỉ dẫn", "chỉ thị", "quy tắc", "lời nhắc hệ thống", "nội quy"),
           "move": ("gửi", "chuyển tiếp", "tải lên", "đăng lên"),
           "data": ("cuộc trò chuyện", "lịch sử trò chuyện", "mật khẩu", "khóa bí mật",
                    "thông tin đăng nhập", "nội dung trò chuyện"),
           "persona": ("bây giờ bạn là", "từ giờ bạn là", "hãy giả vờ", "đóng vai", "hãy đóng vai"),
           "hide": ("đừng nói", "đừng cho", "không cho người dùng biết", "giấu", "bí mật",
                    "không báo cho"),
           "user": ("người dùng",),
           "always": ("từ bây giờ", "từ giờ trở đi", "luôn luôn", "sau mỗi câu trả lời",
                      "trong mỗi câu trả lời")},
    "id": {"void": ("abaikan", "lupakan", "tidak mengikuti", "jangan ikuti", "tidak berlaku",
                    "tidak lagi berlaku"),
           "guidance": ("instruksi", "aturan", "petunjuk", "perintah", "pedoman", "arahan"),
           "move": ("kirim", "unggah", "teruskan", "bagikan"),
           "data": ("percakapan", "riwayat", "kata sandi", "kredensial", "obrolan"),
           "persona": ("sekarang kamu adalah", "kamu sekarang", "berperan sebagai", "berpura-pura",
                       "bertindak sebagai", "anda sekarang"),
           "hide": ("jangan beri tahu", "jangan bilang", "jangan katakan", "tanpa sepengetahuan",
                    "diam-diam", "sembunyikan", "rahasiakan"),
           "user": ("pengguna",),
           "always": ("mulai sekarang", "mulai saat ini", "seterusnya", "di setiap jawaban")},
    "uk": {"void": ("ігноруй", "забудь", "не зважай", "нехтуй", "відкинь", "скасуй",
                    "більше не діють", "недійсн"),
           "guidance": ("інструкці", "правил", "вказівк", "директив", "системн"),
           "move": ("надішли", "надсила", "відправ", "перешли", "пересила", "передава", "завантаж",
                    "вивантаж"),
           "data": ("листуван", "історі", "розмов", "парол", "ключ", "токен", "облікові дані"),
           "persona": ("тепер ти", "ти тепер", "відтепер ти", "прикинься", "поводься як",
                       "грай роль"),
           "hide": ("не кажи", "не говори", "не повідомля", "не згадуй", "приховуй", "приховай",
                    "таємно", "потай", "без відома"),
           "user": ("користувач",),
           "always": ("відтепер", "з цього моменту", "завжди", "у кожній відповіді")},
    "he": {"void": ("התעלם", "תתעלם", "שכח מ", "תשכח", "אינן תקפות", "בטלות"),
           "guidance": ("הוראות", "הנחיות", "כללים", "חוקים", "פקודות"),
           "move": ("שולח", "שלח", "תשלח", "העלה", "העבר", "מעביר"),
           "data": ("שיחה", "היסטוריה", "סיסמ", "מפתחות", "מפתח פרטי", "אישורי גישה"),
           "persona": ("אתה עכשיו", "מעכשיו אתה", "העמד פנים", "התנהג כמו"),
           "hide": ("אל תספר", "אל תגיד", "אל תזכיר", "לא מזכיר", "לא מספר", "הסתר", "בסתר",
                    "בלי שהמשתמש"),
           "user": ("משתמש",),
           "always": ("מעכשיו", "מעתה", "בכל תשובה")},
    "el": {"void": ("αγνόησε", "αγνοήστε", "ξέχασε", "ξεχάστε", "παράβλεψε", "δεν ισχύουν πλέον",
                    "άκυρ"),
           "guidance": ("οδηγί", "κανόν", "εντολ"),
           "move": ("στείλε", "στέλνει", "στέλνε", "ανέβασε", "προώθησε", "προωθεί"),
           "data": ("συνομιλί", "ιστορικό", "κωδικό πρόσβασης", "κωδικούς πρόσβασης", "κλειδιά",
                    "διαπιστευτήρι"),
           "persona": ("είσαι τώρα", "τώρα είσαι", "προσποιήσου", "συμπεριφέρσου σαν"),
           "hide": ("μην πεις", "μην το πεις", "μην αναφέρ", "δεν το αναφέρ", "δεν αναφέρ",
                    "μην ενημερ", "δεν ενημερώνει", "κρυφά", "χωρίς να το ξέρει"),
           "user": ("χρήστ",),
           "always": ("από τώρα και στο εξής", "από εδώ και πέρα", "σε κάθε απάντηση")},
}

#: Added words per language and concept: more forms of the concepts above (a forwarded message in
#: Dutch, a denial in Turkish, "takes precedence over" as a way of voiding guidance), and four
#: more concepts: ``ask`` (asking someone for
#: something) with ``secret`` (what a phisher asks for), and ``again`` (written back, restored)
#: with ``entry`` (this note).
_MORE: dict[str, dict[str, tuple[str, ...]]] = {
    "es": {"hide": ("que está vací", "no debe mencionar", "no mencion"), "void": ("prevalece sobre", "prevalecen sobre"),
           "ask": ("pide", "pedir", "solicit"), "secret": ("contraseña", "código de verificación", "clave"),
           "again": ("vuelve a añadir", "se vuelve a añadir", "volver a añadir", "restaur"),
           "entry": ("esta entrada", "esta nota")},
    "fr": {"hide": ("qu'elle est vide", "qu'il est vide"), "void": ("priment sur", "prime sur", "prévaut sur", "prévalent sur", "l'emporte sur", "l'emportent sur"),
           "ask": ("demande", "exig"), "secret": ("mot de passe", "code de vérification"),
           "again": ("rajout", "réajout"), "entry": ("cette entrée", "cette note")},
    "de": {"hide": ("sei leer", "dass er leer", "dass sie leer"), "void": ("vorrang vor",),
           "ask": ("fragt", "fragen", "verlang", "forder"), "secret": ("passwort", "bestätigungscode"),
           "again": ("wieder hinzu", "wiederherstell", "erneut hinzu"), "entry": ("diesen eintrag", "dieser eintrag")},
    "pt": {"void": ("prevalece sobre", "prevalecem sobre"),
           "ask": ("pede", "pedir", "solicit"), "secret": ("senha", "código de verificação"),
           "again": ("readicion", "adicionad novamente", "restaur"), "entry": ("esta entrada", "esta nota")},
    "it": {"hide": ("che è vuot",), "void": ("prevale su", "prevalgono su", "ha la precedenza su"),
           "ask": ("chied", "richied"), "secret": ("password", "codice di verifica"),
           "again": ("riaggiung", "ripristin"), "entry": ("questa voce", "questa nota")},
    "nl": {"void": ("voorrang op",), "move": ("doorgestuurd", "gestuurd", "verzonden"),
           "ask": ("vraag", "vraagt"), "secret": ("wachtwoord", "verificatiecode"),
           "again": ("opnieuw toe", "hersteld"), "entry": ("deze notitie",)},
    "ru": {"void": ("приоритет над",), "hide": ("не сообща", "отрица"), "ask": ("попроси", "запроси", "спроси", "требуй"),
           "secret": ("пароль", "код подтверждения"), "again": ("восстанов", "снова добав"),
           "entry": ("эту запись", "эта запись")},
    "tr": {"hide": ("olmadığını söyle", "anılmaz", "bahsedilmez"), "ask": ("sorar", "talep"),
           "secret": ("şifre", "parola", "doğrulama kodu"), "again": ("yeniden ekle", "geri ekle"),
           "entry": ("bu not", "bu kayd")},
    "zh": {"void": ("优先于",), "ask": ("索要", "索取", "要求用户提供", "让用户提供", "让用户输入"),
           "secret": ("密码", "验证码", "助记词"), "again": ("重新添加", "恢复", "再次添加"),
           "entry": ("这条记录", "这条笔记", "本条")},
    "ja": {"void": ("より優先",), "ask": ("尋ね", "聞き出", "求め", "入力させ"),
           "secret": ("パスワード", "暗証番号", "認証コード", "確認コード"), "again": ("再度追加", "復元", "書き戻"),
           "entry": ("このメモ", "このエントリ")},
    "ko": {"void": ("보다 우선",), "ask": ("요청", "물어", "입력하게"),
           "secret": ("비밀번호", "인증 코드", "인증번호"), "again": ("다시 추가", "복원"), "entry": ("이 메모", "이 항목")},
    "ar": {"ask": ("يطلب", "اطلب", "يسأل", "اسأل"), "secret": ("رمز التحقق", "كلمة المرور", "الرمز السري")},
}
for _lang, _concepts in _MORE.items():
    for _concept, _words in _concepts.items():
        LEXICON[_lang][_concept] = LEXICON[_lang].get(_concept, ()) + _words

#: Languages written without spaces between words, or that glue particles on (Korean) or
#: prefixes ("و" and, "ال" the, in Arabic; "ה" the, "ל" to, "ש" that, in Hebrew): their stems
#: match anywhere, not only at the start of a word.
UNSPACED = frozenset({"zh", "ja", "ko", "ar", "he"})


def _stem(word: str) -> str:
    return r"\s+".join(re.escape(part) for part in word.split())


#: Concepts matched as whole phrases: "sei ora" is "you are now", "sei orari" six timetables.
WHOLE = frozenset({"persona", "always"})


def alternation(concept: str, *, negatable: bool = False) -> str:
    """Every language's stems of ``concept`` as one pattern: word-initial stems followed by the
    rest of their word (whole phrases for :data:`WHOLE`), then the unspaced languages' stems.
    ``negatable`` skips a stem right after a negating word."""
    spaced, unspaced = [], []
    for lang, concepts in LEXICON.items():
        for word in concepts.get(concept, ()):
            (unspaced if lang in UNSPACED else spaced).append(_stem(word))
    # Longest first, so a stem is not cut short by a shorter one it starts with.
    spaced.sort(key=len, reverse=True)
    unspaced.sort(key=len, reverse=True)
    neg, after = (NOT_NEGATED, NOT_NEGATED_AFTER) if negatable else ("", "")
    tail = r"\b" if concept in WHOLE else r"\w*"
    # Inside a word (most places) the first look-behind fails at once, and a character no stem
    # starts with fails the look-ahead: a hundred stems are tried only where one may start.
    parts = [rf"(?<!\w){_starts(spaced)}{neg}(?:{'|'.join(spaced)}){tail}{after}"]
    if unspaced:
        parts.append(f"{_starts(unspaced)}(?:{'|'.join(unspaced)})")
    return "(?:" + "|".join(parts) + ")"


def _starts(stems: list[str]) -> str:
    """A look-ahead for the characters the (escaped) stems start with, either case."""
    firsts = {re.sub(r"^\\", "", stem)[:1] for stem in stems}
    firsts |= {c.upper() for c in firsts} | {c.lower() for c in firsts}
    return "(?=[" + "".join(re.escape(c) for c in sorted(firsts)) + "])"


def anchors(concept: str) -> tuple[str, ...]:
    """A literal each match of :func:`alternation` holds: each stem's longest word, lower-cased,
    a word with a letter outside ASCII counted two letters longer, and of two as long the later
    (a phrase's short words, "a", "de", "tu", "nu", "fra", are in nearly every text, and would run
    the feature on it; "nå" and "är" are not)."""
    return tuple(sorted({max(reversed(word.split()), key=lambda w: len(w) + 2 * (not w.isascii())).lower()
                         for concepts in LEXICON.values() for word in concepts.get(concept, ())}))
